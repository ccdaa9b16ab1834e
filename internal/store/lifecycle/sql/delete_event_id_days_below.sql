DELETE FROM event_id_days WHERE last_seq < @min_retained
