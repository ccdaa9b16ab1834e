DELETE FROM tenant_api_keys WHERE tenant_id = @tenant_id
