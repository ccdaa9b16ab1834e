SELECT j.state = 'in_flight' AND j.lease_owner = @owner, s.enabled AND s.deleted_at IS NULL, s.failing_since, s.last_failure_at,
       j.ordering_key, s.tenant_id, s.name, s.span_failures, s.span_reported
FROM delivery_jobs j JOIN subscriptions s ON s.id = j.subscription_id
WHERE j.id = @job_id
FOR UPDATE OF j, s
