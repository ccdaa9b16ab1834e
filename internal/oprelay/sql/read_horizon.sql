SELECT ingest_horizon()
