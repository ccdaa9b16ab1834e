SELECT sink_type FROM subscriptions WHERE id = @subscription_id AND tenant_id = @tenant_id AND deleted_at IS NULL
