DELETE FROM subscription_rates WHERE subscription_id IN (SELECT id FROM subscriptions WHERE tenant_id = @tenant_id)
