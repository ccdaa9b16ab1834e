SELECT EXISTS (SELECT 1 FROM delivery_jobs WHERE id >= @lo AND id < @hi AND updated_at > @cutoff)
