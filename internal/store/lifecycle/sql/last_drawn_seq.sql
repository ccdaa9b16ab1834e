SELECT last_value FROM events_seq_seq
