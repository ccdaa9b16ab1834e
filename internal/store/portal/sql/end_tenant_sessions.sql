UPDATE portal_sessions SET ended_at = @now
WHERE tenant_id = @tenant_id AND ended_at IS NULL AND expires_at > @now
