VACUUM (ANALYZE) events, event_ids, event_id_days, delivery_jobs, delivery_attempts
