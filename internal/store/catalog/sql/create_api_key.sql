INSERT INTO tenant_api_keys (id, tenant_id, name, token_hash, token_prefix, created_at)
SELECT @id, t.id, @name, @token_hash, @token_prefix, @created_at FROM tenants t WHERE t.id = @tenant_id
RETURNING id::text, tenant_id, name, token_prefix, created_at, last_used_at, revoked_at
