DELETE FROM hub_instances WHERE heartbeat_at < @cutoff AND owner <> @owner
