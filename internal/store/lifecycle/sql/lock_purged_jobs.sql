SELECT count(*) FROM (SELECT 1 FROM delivery_jobs WHERE tenant_id = @id FOR UPDATE) j
