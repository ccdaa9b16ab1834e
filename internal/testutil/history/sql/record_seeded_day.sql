INSERT INTO event_id_days (day, last_seq) VALUES (@day, @last_seq)
ON CONFLICT (day, slot) DO UPDATE SET last_seq = greatest(event_id_days.last_seq, excluded.last_seq)
