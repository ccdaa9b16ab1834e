SELECT id, status FROM tenants WHERE id = ANY(@ids)
