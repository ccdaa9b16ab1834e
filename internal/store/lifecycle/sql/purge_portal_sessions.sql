DELETE FROM portal_sessions WHERE tenant_id = @tenant_id
