INSERT INTO idempotency_keys AS k (scope, key, tenant_id, fingerprint, state, created_at)
VALUES (@scope, @key, nullif(@tenant, ''), @fingerprint, 'in_progress', @now)
ON CONFLICT (scope, key) DO UPDATE
SET tenant_id = excluded.tenant_id, fingerprint = excluded.fingerprint, state = 'in_progress', status = NULL,
    location = NULL, response = NULL, created_at = excluded.created_at
WHERE k.created_at < @expired OR (k.state = 'in_progress' AND k.created_at < @abandoned)
RETURNING true
