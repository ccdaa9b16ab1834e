SELECT pg_current_wal_lsn()::text
