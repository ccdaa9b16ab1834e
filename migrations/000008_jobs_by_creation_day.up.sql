-- Delivery jobs partitioned by the day they were created, read from their
-- UUIDv7 id, instead of by state. Ending a job is then an update in place:
-- partitioning by state moved every finished job to another partition, a
-- delete and an insert on dispatch's hottest statement, and halved its
-- throughput (docs/benchmarks.md). The id is the partition key, so it is
-- the primary key again and a lookup by id touches one partition.
--
-- A job still pending, in flight, or finished within retention keeps its
-- whole day (docs/architecture.md, "Storage lifecycle"). Daily partitions
-- are made ahead by the storage maintainer; what no daily one covers (a
-- clock far off, ids made elsewhere, every job stored before this
-- migration) lives in the default partition.
ALTER TABLE delivery_jobs RENAME TO delivery_jobs_v7;
ALTER INDEX delivery_jobs_id RENAME TO delivery_jobs_v7_id;
ALTER INDEX delivery_jobs_by_subscription RENAME TO delivery_jobs_v7_by_subscription;
ALTER INDEX delivery_jobs_due RENAME TO delivery_jobs_v7_due;
ALTER INDEX delivery_jobs_leases RENAME TO delivery_jobs_v7_leases;
ALTER INDEX delivery_jobs_dead RENAME TO delivery_jobs_v7_dead;
CREATE TABLE delivery_jobs (LIKE delivery_jobs_v7 INCLUDING DEFAULTS INCLUDING CONSTRAINTS, PRIMARY KEY (id))
    PARTITION BY RANGE (id);
CREATE TABLE delivery_jobs_default PARTITION OF delivery_jobs DEFAULT;
CREATE INDEX delivery_jobs_by_subscription ON delivery_jobs (subscription_id, event_seq);
-- The partial indexes dispatch relies on (see 000001).
CREATE INDEX delivery_jobs_due ON delivery_jobs (tenant_id, next_attempt_at, event_seq) WHERE state = 'pending';
CREATE INDEX delivery_jobs_leases ON delivery_jobs (lease_until) WHERE state = 'in_flight';
CREATE INDEX delivery_jobs_dead ON delivery_jobs (tenant_id, dead_at DESC, id) WHERE state = 'dead';
INSERT INTO delivery_jobs SELECT * FROM delivery_jobs_v7;
DROP TABLE delivery_jobs_v7;
