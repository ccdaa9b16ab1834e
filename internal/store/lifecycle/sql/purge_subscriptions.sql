DELETE FROM subscriptions WHERE tenant_id = @tenant_id
