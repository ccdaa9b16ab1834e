-- Back to 000003's layout: live jobs in one partition, terminal ones in
-- partitions of the time they ended (all in the default one here; the
-- maintainer of that version makes the daily ones again).
ALTER TABLE delivery_jobs RENAME TO delivery_jobs_v8;
ALTER INDEX delivery_jobs_by_subscription RENAME TO delivery_jobs_v8_by_subscription;
ALTER INDEX delivery_jobs_due RENAME TO delivery_jobs_v8_due;
ALTER INDEX delivery_jobs_leases RENAME TO delivery_jobs_v8_leases;
ALTER INDEX delivery_jobs_dead RENAME TO delivery_jobs_v8_dead;
CREATE TABLE delivery_jobs (LIKE delivery_jobs_v8 INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY LIST (state);
CREATE TABLE delivery_jobs_live PARTITION OF delivery_jobs FOR VALUES IN ('pending', 'in_flight');
CREATE TABLE delivery_jobs_done PARTITION OF delivery_jobs FOR VALUES IN ('succeeded', 'dead', 'canceled')
    PARTITION BY RANGE (updated_at);
CREATE TABLE delivery_jobs_done_default PARTITION OF delivery_jobs_done DEFAULT;
CREATE INDEX delivery_jobs_id ON delivery_jobs (id);
CREATE INDEX delivery_jobs_by_subscription ON delivery_jobs (subscription_id, event_seq);
CREATE INDEX delivery_jobs_due ON delivery_jobs_live (tenant_id, next_attempt_at, event_seq) WHERE state = 'pending';
CREATE INDEX delivery_jobs_leases ON delivery_jobs_live (lease_until) WHERE state = 'in_flight';
CREATE INDEX delivery_jobs_dead ON delivery_jobs_done (tenant_id, dead_at DESC, id) WHERE state = 'dead';
INSERT INTO delivery_jobs SELECT * FROM delivery_jobs_v8;
DROP TABLE delivery_jobs_v8;
