SELECT a.job_id
FROM all_delivery_attempts a
JOIN delivery_jobs j ON j.id = a.job_id
WHERE a.id = @attempt_id AND j.tenant_id = @tenant_id
