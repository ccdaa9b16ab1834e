SELECT a.job_id
FROM delivery_attempts a
JOIN delivery_jobs j ON j.id = a.job_id
WHERE a.id = @attempt_id AND j.tenant_id = @tenant_id
UNION ALL
-- A successful attempt folded into its job (migration 24), by the partial
-- index on the folded id.
SELECT j.id
FROM delivery_jobs j
WHERE j.succeeded_attempt_id = @attempt_id AND j.tenant_id = @tenant_id
