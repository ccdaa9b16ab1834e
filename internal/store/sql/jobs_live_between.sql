SELECT EXISTS (SELECT 1 FROM delivery_jobs WHERE state = 'pending' AND id >= @lo AND id < @hi)
    OR EXISTS (SELECT 1 FROM delivery_jobs WHERE state = 'in_flight' AND id >= @lo AND id < @hi)
