SELECT count(*) FROM subscriptions WHERE tenant_id = @tenant_id AND deleted_at IS NULL
