SELECT owner, role, version, started_at, heartbeat_at, stats FROM hub_instances
WHERE heartbeat_at >= @cutoff ORDER BY owner
