DELETE FROM pull_cursors WHERE subscription_id IN (SELECT id FROM subscriptions WHERE tenant_id = @tenant_id)
