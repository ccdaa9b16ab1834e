-- The attempt rows of the tenant's jobs (failures and late results); a
-- successful attempt folded into its job (migration 24) goes with the job.
DELETE FROM delivery_attempts WHERE job_id IN (SELECT id FROM delivery_jobs WHERE tenant_id = @tenant_id)
