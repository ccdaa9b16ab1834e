SELECT id::text, tenant_id, name, token_prefix, created_at, last_used_at, revoked_at FROM tenant_api_keys
WHERE tenant_id = @tenant_id
  AND (@after_at::timestamptz IS NULL OR (created_at, id) > (@after_at, @after_id::uuid))
ORDER BY created_at, id
LIMIT @limit
