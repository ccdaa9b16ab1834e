SELECT count(*) FROM delivery_jobs WHERE tenant_id = @id AND state = 'in_flight' AND lease_until > @now
