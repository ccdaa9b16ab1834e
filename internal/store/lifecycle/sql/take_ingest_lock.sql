SELECT pg_advisory_xact_lock(@ingest_lock_key)
