SELECT s.id, s.tenant_id, s.read_only, s.expires_at
FROM portal_sessions s
LEFT JOIN tenants t ON t.id = s.tenant_id
WHERE s.token_hash = @session_hash AND s.ended_at IS NULL AND s.expires_at > @now
  AND (s.tenant_id IS NULL OR t.status = 'active')
