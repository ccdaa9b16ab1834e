SELECT hubctl_has_rows_in_state(@partition, 'pending') OR hubctl_has_rows_in_state(@partition, 'in_flight')
