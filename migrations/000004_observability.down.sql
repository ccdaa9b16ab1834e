ALTER TABLE delivery_jobs DROP COLUMN shed_reason, DROP COLUMN shed_at;
DROP TABLE breaker_states;
DROP TABLE hub_instances;
