DELETE FROM delivery_jobs WHERE tenant_id = @tenant_id
