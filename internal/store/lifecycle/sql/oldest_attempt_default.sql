SELECT min(started_at) FROM delivery_attempts_default
