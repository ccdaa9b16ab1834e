UPDATE portal_sessions SET ended_at = @now
WHERE token_hash = @session_hash AND ended_at IS NULL
