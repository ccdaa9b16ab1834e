DELETE FROM portal_links WHERE tenant_id = @tenant_id
