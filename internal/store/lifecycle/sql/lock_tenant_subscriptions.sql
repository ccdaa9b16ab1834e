SELECT count(*) FROM (SELECT 1 FROM subscriptions WHERE tenant_id = @id FOR UPDATE) s
