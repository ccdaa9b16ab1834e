SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM events_seq_seq
