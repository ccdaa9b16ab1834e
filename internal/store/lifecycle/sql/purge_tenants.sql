DELETE FROM tenants WHERE id = @tenant_id
