DELETE FROM operational_outbox WHERE tenant_id = @tenant_id
