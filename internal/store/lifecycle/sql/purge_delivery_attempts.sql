DELETE FROM delivery_attempts WHERE job_id IN (SELECT id FROM delivery_jobs WHERE tenant_id = @tenant_id)
