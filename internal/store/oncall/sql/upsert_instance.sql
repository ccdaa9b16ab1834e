INSERT INTO hub_instances (owner, role, version, started_at, heartbeat_at, stats)
VALUES (@owner, @role, @version, @started, @beat, @stats)
ON CONFLICT (owner) DO UPDATE SET heartbeat_at = EXCLUDED.heartbeat_at, stats = EXCLUDED.stats
