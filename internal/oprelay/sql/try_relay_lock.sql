SELECT pg_try_advisory_lock(@relay_lock_key)
