SELECT id, status, created_at, updated_at FROM tenants
WHERE id > @after_id
ORDER BY id
LIMIT @limit
