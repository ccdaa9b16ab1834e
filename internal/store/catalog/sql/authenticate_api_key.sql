WITH found AS (
    SELECT k.id, k.tenant_id, k.name, k.token_prefix, k.created_at, k.last_used_at, k.revoked_at, t.status
    FROM tenant_api_keys k JOIN tenants t ON t.id = k.tenant_id
    WHERE k.token_hash = @token_hash
), touched AS (
    UPDATE tenant_api_keys k
    SET last_used_at = @now::timestamptz
    FROM found f
    WHERE k.id = f.id AND f.revoked_at IS NULL
      AND (k.last_used_at IS NULL OR k.last_used_at <= @now::timestamptz - @touch_every::interval)
)
SELECT id::text, tenant_id, name, token_prefix, created_at, last_used_at, revoked_at, status FROM found
