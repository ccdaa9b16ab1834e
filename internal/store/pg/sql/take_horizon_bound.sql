SELECT pg_advisory_xact_lock_shared(-4611686018427387904 + (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM events_seq_seq))
