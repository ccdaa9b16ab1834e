DELETE FROM portal_links WHERE expires_at <= @now
