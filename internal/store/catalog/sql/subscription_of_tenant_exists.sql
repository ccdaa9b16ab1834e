SELECT EXISTS (SELECT 1 FROM subscriptions WHERE id = @subscription_id AND tenant_id = @tenant_id)
