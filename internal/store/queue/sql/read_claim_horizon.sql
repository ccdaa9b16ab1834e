SELECT set_config('hubctl.ingest_horizon',
CASE WHEN EXISTS (SELECT 1 FROM delivery_jobs WHERE ordering_key IS NOT NULL AND state IN ('pending', 'in_flight'))
     THEN ingest_horizon() ELSE 0 END::text, true)
