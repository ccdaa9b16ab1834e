DELETE FROM delivery_jobs_default WHERE state NOT IN ('pending', 'in_flight') AND updated_at < @cutoff
