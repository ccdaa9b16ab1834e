UPDATE delivery_jobs SET state = 'canceled', lease_owner = NULL, lease_until = NULL, updated_at = now()
WHERE id = ANY(@job_ids) AND state = 'in_flight' AND lease_owner = @owner
