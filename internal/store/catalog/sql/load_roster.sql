SELECT id, status FROM tenants
