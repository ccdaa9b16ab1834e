DELETE FROM dead_letter_reports WHERE tenant_id = @tenant_id
