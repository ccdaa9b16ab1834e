DELETE FROM event_ids WHERE tenant_id = @tenant_id
