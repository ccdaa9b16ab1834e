DELETE FROM pull_entries WHERE subscription_id IN (SELECT id FROM subscriptions WHERE tenant_id = @tenant_id)
