SELECT pg_advisory_lock(@key)
