UPDATE delivery_jobs SET state = 'canceled', updated_at = @now WHERE tenant_id = @id AND state = 'pending'
