SELECT id, status, created_at, updated_at FROM tenants WHERE id = @id
