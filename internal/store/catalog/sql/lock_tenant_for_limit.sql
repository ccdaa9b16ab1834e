SELECT true FROM tenants WHERE id = @tenant_id FOR NO KEY UPDATE
