SELECT t FROM unnest(@tenants::text[]) t
WHERE EXISTS (SELECT 1 FROM delivery_jobs j WHERE j.state = 'pending' AND j.tenant_id = t AND j.next_attempt_at <= clock_timestamp())
