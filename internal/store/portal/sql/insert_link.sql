INSERT INTO portal_links (token_hash, tenant_id, read_only, created_at, expires_at)
SELECT @token_hash, @tenant_id, @read_only, @created_at, @expires_at
WHERE @tenant_id::text IS NULL OR EXISTS (SELECT 1 FROM tenants WHERE id = @tenant_id)
RETURNING expires_at
