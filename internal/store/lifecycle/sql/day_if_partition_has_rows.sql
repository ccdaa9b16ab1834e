SELECT CASE WHEN hubctl_has_rows(@partition) THEN @day::timestamptz END
