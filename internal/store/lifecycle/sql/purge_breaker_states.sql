DELETE FROM breaker_states WHERE tenant_id = @tenant_id
