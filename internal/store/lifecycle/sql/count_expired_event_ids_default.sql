SELECT count(*) FROM event_ids_default WHERE seq < @min_retained
