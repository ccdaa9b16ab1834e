UPDATE delivery_jobs SET state = 'pending', next_attempt_at = @retry_at, lease_owner = NULL, lease_until = NULL,
    shed_reason = @reason, shed_at = now(), updated_at = now()
WHERE id = @id AND state = 'in_flight' AND lease_owner = @owner
