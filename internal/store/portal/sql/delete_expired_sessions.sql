DELETE FROM portal_sessions WHERE expires_at <= @now
