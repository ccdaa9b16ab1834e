SELECT nextval('events_seq_seq') FROM generate_series(1, @count)
