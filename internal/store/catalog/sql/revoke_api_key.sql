UPDATE tenant_api_keys
SET revoked_at = COALESCE(revoked_at, @at)
WHERE id = @key_id AND tenant_id = @tenant_id
RETURNING id::text, tenant_id, name, token_prefix, created_at, last_used_at, revoked_at
