DELETE FROM events WHERE tenant_id = @tenant_id
