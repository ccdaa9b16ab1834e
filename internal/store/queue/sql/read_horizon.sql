SELECT set_config('hubctl.ingest_horizon', ingest_horizon()::text, true)
