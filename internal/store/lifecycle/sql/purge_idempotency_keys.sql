DELETE FROM idempotency_keys WHERE tenant_id = @tenant_id
