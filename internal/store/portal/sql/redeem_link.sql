-- One statement marks the link used and opens its session, so two
-- browsers opening one link at once get one session between them: the
-- second UPDATE finds redeemed_at set once the first commits. A link of an
-- inactive tenant is not redeemed, and stays unused.
WITH redeemed AS (
    UPDATE portal_links l SET redeemed_at = @now
    WHERE l.token_hash = @link_hash AND l.redeemed_at IS NULL AND l.expires_at > @now
      AND (l.tenant_id IS NULL OR EXISTS (SELECT 1 FROM tenants t WHERE t.id = l.tenant_id AND t.status = 'active'))
    RETURNING l.tenant_id, l.read_only, l.expires_at
)
INSERT INTO portal_sessions (id, token_hash, tenant_id, read_only, created_at, expires_at)
SELECT @session_id, @session_hash, tenant_id, read_only, @now, expires_at FROM redeemed
RETURNING id, tenant_id, read_only, expires_at
