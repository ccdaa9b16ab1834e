SELECT hubctl_has_rows_after(@partition, 'updated_at', @cutoff)
