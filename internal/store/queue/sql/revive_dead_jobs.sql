UPDATE delivery_jobs
SET state = 'pending', attempts = 0, recoveries = 0, next_attempt_at = @now,
    dead_reason = NULL, dead_at = NULL, updated_at = @now
WHERE id = ANY (@revive) AND state = 'dead'
