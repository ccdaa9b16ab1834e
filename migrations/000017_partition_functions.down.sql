DROP FUNCTION hubctl_has_rows_after(text, text, timestamptz);
DROP FUNCTION hubctl_has_rows_in_state(text, text);
DROP FUNCTION hubctl_has_rows(text);
DROP FUNCTION hubctl_count_rows(text);
DROP FUNCTION hubctl_create_partition(text, text, text, text, text, text);
