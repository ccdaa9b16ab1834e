UPDATE tenants SET status = 'inactive', updated_at = @now WHERE id = @id AND status <> 'inactive'
