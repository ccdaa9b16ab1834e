DELETE FROM delivery_attempts_default WHERE started_at < @cutoff
