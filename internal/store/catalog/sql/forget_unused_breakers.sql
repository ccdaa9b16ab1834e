DELETE FROM breaker_states WHERE tenant_id = @tenant_id AND destination = @destination AND NOT
    EXISTS (SELECT 1 FROM subscriptions s WHERE s.tenant_id = @tenant_id AND s.destination = @destination AND s.deleted_at IS NULL AND s.enabled)
