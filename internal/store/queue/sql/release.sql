UPDATE delivery_jobs SET state = 'pending', lease_owner = NULL, lease_until = NULL, updated_at = now()
WHERE id = ANY(@ids) AND state = 'in_flight' AND lease_owner = @owner
