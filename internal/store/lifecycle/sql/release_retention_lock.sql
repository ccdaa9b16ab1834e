SELECT pg_advisory_unlock(@retention_lock_key)
