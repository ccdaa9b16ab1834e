-- Storage lifecycle: every table that grows with traffic becomes a
-- partitioned table, so retention drops whole partitions instead of deleting
-- rows (docs/architecture.md, "Storage lifecycle"). This migration only lays
-- out the parents and the catch-all partitions and moves every existing row
-- in; the daily partitions are created ahead of time, and dropped when old,
-- by the hub's storage maintainer (internal/store/lifecycle.go).
--
-- Each conversion renames the old table, creates the partitioned one LIKE it
-- (so columns added by other migrations travel along), copies the rows and
-- drops the old table. Sequences keep counting from where they were.

-- The inbox: ranges of seq. The maintainer gives each UTC day its own range
-- of 2^36 seqs and moves the sequence into it when the day starts, so a
-- lookup by seq (claims, pull pages) touches exactly one partition. What was
-- stored before lives in events_legacy, below the first day's range.
ALTER TABLE events RENAME TO events_v1;
ALTER TABLE events_v1 RENAME CONSTRAINT events_pkey TO events_v1_pkey;
CREATE TABLE events (LIKE events_v1 INCLUDING DEFAULTS INCLUDING CONSTRAINTS, PRIMARY KEY (seq))
    PARTITION BY RANGE (seq);
CREATE SEQUENCE events_seq_v3 AS bigint OWNED BY events.seq;
ALTER TABLE events ALTER COLUMN seq SET DEFAULT nextval('events_seq_v3');
CREATE TABLE events_legacy PARTITION OF events FOR VALUES FROM (MINVALUE) TO (
    ((current_date - date '2020-01-01')::bigint) << 36);
INSERT INTO events SELECT * FROM events_v1;
SELECT setval('events_seq_v3', greatest((SELECT last_value FROM events_seq_seq), 1),
              (SELECT is_called FROM events_seq_seq));

-- Consume-once across partitions: (tenant, id) is unique in a table of its
-- own, partitioned by the id's own time (a UUIDv7 starts with its Unix
-- milliseconds), because a unique index on a partitioned table must contain
-- the partition key. An id outside every daily range (a producer's clock far
-- off, an old event replayed) goes to the default partition. seq names the
-- event the id belongs to.
CREATE TABLE event_ids (
    tenant_id  text NOT NULL,
    id         uuid NOT NULL,
    seq        bigint NOT NULL,
    PRIMARY KEY (tenant_id, id)
) PARTITION BY RANGE (id);
CREATE TABLE event_ids_default PARTITION OF event_ids DEFAULT;
INSERT INTO event_ids SELECT tenant_id, id, seq FROM events_v1;

-- The highest seq whose id falls on each UTC day of id time: a daily
-- partition of event_ids may go only once every event it names is gone.
-- Ingest keeps it (one row per id day, updated once per batch).
CREATE TABLE event_id_days (
    day       date PRIMARY KEY,
    last_seq  bigint NOT NULL
);
INSERT INTO event_id_days (day, last_seq)
SELECT (to_timestamp(('x' || substr(replace(id::text, '-', ''), 1, 12))::bit(48)::bigint / 1000.0) AT TIME ZONE 'UTC')::date,
       max(seq)
FROM events_v1 GROUP BY 1;

DROP TABLE events_v1;
ALTER SEQUENCE events_seq_v3 RENAME TO events_seq_seq;

-- Pull streams: the same seq ranges as the inbox, dropped with it.
ALTER TABLE pull_entries RENAME TO pull_entries_v1;
ALTER TABLE pull_entries_v1 RENAME CONSTRAINT pull_entries_pkey TO pull_entries_v1_pkey;
CREATE TABLE pull_entries (
    subscription_id  uuid NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    event_seq        bigint NOT NULL,
    PRIMARY KEY (subscription_id, event_seq)
) PARTITION BY RANGE (event_seq);
CREATE TABLE pull_entries_legacy PARTITION OF pull_entries FOR VALUES FROM (MINVALUE) TO (
    ((current_date - date '2020-01-01')::bigint) << 36);
INSERT INTO pull_entries SELECT * FROM pull_entries_v1;
DROP TABLE pull_entries_v1;

-- When retention dropped entries a reader had not read, the highest such
-- seq: the next read says events_expired and resumes past it.
ALTER TABLE pull_cursors ADD COLUMN expired_seq bigint NOT NULL DEFAULT 0;

-- Delivery jobs: live jobs (pending, in flight) in one partition, which is
-- all that claims, lease recovery and ingest touch; terminal jobs
-- (succeeded, dead, canceled) move out, by the same UPDATE that ends them,
-- into daily partitions of the time they ended (updated_at). A replayed dead
-- letter moves back. The id is a UUIDv7 made by the hub, unique by
-- construction; a unique index would have to contain state and updated_at.
-- subscription_id has no foreign key any more: moving a row inserts it, and
-- the key's check would run once per finished job on dispatch's hot path
-- (subscriptions are never deleted but by a tenant purge, which removes
-- their jobs first).
ALTER TABLE delivery_jobs RENAME TO delivery_jobs_v1;
ALTER TABLE delivery_jobs_v1 RENAME CONSTRAINT delivery_jobs_pkey TO delivery_jobs_v1_pkey;
ALTER INDEX delivery_jobs_due RENAME TO delivery_jobs_v1_due;
ALTER INDEX delivery_jobs_leases RENAME TO delivery_jobs_v1_leases;
ALTER INDEX delivery_jobs_dead RENAME TO delivery_jobs_v1_dead;
CREATE TABLE delivery_jobs (LIKE delivery_jobs_v1 INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY LIST (state);
CREATE TABLE delivery_jobs_live PARTITION OF delivery_jobs FOR VALUES IN ('pending', 'in_flight');
CREATE TABLE delivery_jobs_done PARTITION OF delivery_jobs FOR VALUES IN ('succeeded', 'dead', 'canceled')
    PARTITION BY RANGE (updated_at);
CREATE TABLE delivery_jobs_done_default PARTITION OF delivery_jobs_done DEFAULT;
CREATE INDEX delivery_jobs_id ON delivery_jobs (id);
CREATE INDEX delivery_jobs_by_subscription ON delivery_jobs (subscription_id, event_seq);
-- The partial indexes dispatch relies on (see 000001) live on the live
-- partition alone; the dead-letter index on the terminal ones alone.
CREATE INDEX delivery_jobs_due ON delivery_jobs_live (tenant_id, next_attempt_at, event_seq) WHERE state = 'pending';
CREATE INDEX delivery_jobs_leases ON delivery_jobs_live (lease_until) WHERE state = 'in_flight';
CREATE INDEX delivery_jobs_dead ON delivery_jobs_done (tenant_id, dead_at DESC, id) WHERE state = 'dead';
INSERT INTO delivery_jobs SELECT * FROM delivery_jobs_v1;
DROP TABLE delivery_jobs_v1;

-- Attempts: daily partitions of started_at.
ALTER TABLE delivery_attempts RENAME TO delivery_attempts_v1;
ALTER TABLE delivery_attempts_v1 RENAME CONSTRAINT delivery_attempts_pkey TO delivery_attempts_v1_pkey;
CREATE TABLE delivery_attempts (LIKE delivery_attempts_v1 INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
    PRIMARY KEY (id, started_at))
    PARTITION BY RANGE (started_at);
CREATE TABLE delivery_attempts_default PARTITION OF delivery_attempts DEFAULT;
CREATE INDEX delivery_attempts_by_job ON delivery_attempts (job_id, attempt);
INSERT INTO delivery_attempts SELECT * FROM delivery_attempts_v1;
DROP TABLE delivery_attempts_v1;

-- Quarantine: daily partitions of received_at. The old one-row-per-offset
-- key cannot span partitions; the stored partition offset already keeps
-- ingest from processing an offset twice.
ALTER TABLE quarantine RENAME TO quarantine_v1;
ALTER TABLE quarantine_v1 RENAME CONSTRAINT quarantine_pkey TO quarantine_v1_pkey;
ALTER INDEX quarantine_newest RENAME TO quarantine_v1_newest;
CREATE TABLE quarantine (LIKE quarantine_v1 INCLUDING DEFAULTS INCLUDING CONSTRAINTS, PRIMARY KEY (id, received_at))
    PARTITION BY RANGE (received_at);
CREATE SEQUENCE quarantine_id_v3 AS bigint OWNED BY quarantine.id;
ALTER TABLE quarantine ALTER COLUMN id SET DEFAULT nextval('quarantine_id_v3');
CREATE TABLE quarantine_default PARTITION OF quarantine DEFAULT;
CREATE INDEX quarantine_newest ON quarantine (received_at DESC, id DESC);
INSERT INTO quarantine SELECT * FROM quarantine_v1;
SELECT setval('quarantine_id_v3', greatest((SELECT last_value FROM quarantine_id_seq), 1),
              (SELECT is_called FROM quarantine_id_seq));
DROP TABLE quarantine_v1;
ALTER SEQUENCE quarantine_id_v3 RENAME TO quarantine_id_seq;
