-- Back to the plain tables of 000001, keeping every row the partitions hold.
-- Constraints the partitioned layout could not enforce come back; rows that
-- would break them (quarantined records of one stream position stored twice
-- after a topic was recreated) keep their first copy.

ALTER TABLE quarantine RENAME TO quarantine_v3;
ALTER INDEX quarantine_newest RENAME TO quarantine_v3_newest;
ALTER TABLE quarantine_v3 RENAME CONSTRAINT quarantine_pkey TO quarantine_v3_pkey;
ALTER SEQUENCE quarantine_id_seq RENAME TO quarantine_id_v3;
CREATE TABLE quarantine (LIKE quarantine_v3 INCLUDING CONSTRAINTS);
ALTER TABLE quarantine ALTER COLUMN detail SET DEFAULT '';
ALTER TABLE quarantine ALTER COLUMN received_at SET DEFAULT now();
-- Version 2's default (000002); the other columns it added have none.
ALTER TABLE quarantine ALTER COLUMN value_truncated SET DEFAULT false;
ALTER TABLE quarantine ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY;
ALTER TABLE quarantine ADD PRIMARY KEY (id), ADD UNIQUE (topic, kafka_partition, kafka_offset);
CREATE INDEX quarantine_newest ON quarantine (received_at DESC, id DESC);
INSERT INTO quarantine OVERRIDING SYSTEM VALUE SELECT * FROM quarantine_v3 ORDER BY id ON CONFLICT DO NOTHING;
SELECT setval(pg_get_serial_sequence('quarantine', 'id'), (SELECT last_value FROM quarantine_id_v3),
              (SELECT is_called FROM quarantine_id_v3));
DROP TABLE quarantine_v3;

ALTER TABLE delivery_attempts RENAME TO delivery_attempts_v3;
ALTER TABLE delivery_attempts_v3 RENAME CONSTRAINT delivery_attempts_pkey TO delivery_attempts_v3_pkey;
CREATE TABLE delivery_attempts (
    id                uuid PRIMARY KEY,
    job_id            uuid NOT NULL,
    attempt           integer NOT NULL CHECK (attempt >= 1),
    started_at        timestamptz NOT NULL,
    duration_ms       integer NOT NULL CHECK (duration_ms >= 0),
    outcome           text NOT NULL CHECK (outcome IN ('succeeded', 'failed')),
    status_code       integer,
    error             text,
    response_snippet  bytea CHECK (octet_length(response_snippet) <= 1024),
    UNIQUE (job_id, attempt)
);
INSERT INTO delivery_attempts SELECT * FROM delivery_attempts_v3 ON CONFLICT DO NOTHING;
DROP TABLE delivery_attempts_v3;

ALTER TABLE delivery_jobs RENAME TO delivery_jobs_v3;
ALTER INDEX delivery_jobs_due RENAME TO delivery_jobs_v3_due;
ALTER INDEX delivery_jobs_leases RENAME TO delivery_jobs_v3_leases;
ALTER INDEX delivery_jobs_dead RENAME TO delivery_jobs_v3_dead;
CREATE TABLE delivery_jobs (
    id               uuid PRIMARY KEY,
    tenant_id        text NOT NULL,
    subscription_id  uuid NOT NULL REFERENCES subscriptions (id),
    event_seq        bigint NOT NULL,
    state            text NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'in_flight', 'succeeded', 'dead', 'canceled')),
    attempts         integer NOT NULL DEFAULT 0,
    recorded_attempts integer NOT NULL DEFAULT 0,
    recoveries       integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    lease_owner      text,
    lease_until      timestamptz,
    last_error       text,
    last_status      integer,
    dead_reason      text CHECK (dead_reason IN ('exhausted', 'poison', 'subscription_disabled')),
    dead_at          timestamptz,
    succeeded_at     timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (subscription_id, event_seq),
    CHECK ((state = 'dead') = (dead_reason IS NOT NULL)),
    CHECK ((state = 'in_flight') = (lease_until IS NOT NULL))
);
CREATE INDEX delivery_jobs_due ON delivery_jobs (tenant_id, next_attempt_at, event_seq) WHERE state = 'pending';
CREATE INDEX delivery_jobs_leases ON delivery_jobs (lease_until) WHERE state = 'in_flight';
CREATE INDEX delivery_jobs_dead ON delivery_jobs (tenant_id, dead_at DESC, id) WHERE state = 'dead';
INSERT INTO delivery_jobs SELECT * FROM delivery_jobs_v3 ON CONFLICT DO NOTHING;
DROP TABLE delivery_jobs_v3;

ALTER TABLE pull_cursors DROP COLUMN expired_seq;

ALTER TABLE pull_entries RENAME TO pull_entries_v3;
ALTER TABLE pull_entries_v3 RENAME CONSTRAINT pull_entries_pkey TO pull_entries_v3_pkey;
CREATE TABLE pull_entries (
    subscription_id  uuid NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    event_seq        bigint NOT NULL,
    PRIMARY KEY (subscription_id, event_seq)
);
INSERT INTO pull_entries SELECT * FROM pull_entries_v3;
DROP TABLE pull_entries_v3;

DROP TABLE event_id_days;
DROP TABLE event_ids;

ALTER TABLE events RENAME TO events_v3;
ALTER TABLE events_v3 RENAME CONSTRAINT events_pkey TO events_v3_pkey;
ALTER SEQUENCE events_seq_seq RENAME TO events_seq_v3;
CREATE TABLE events (
    seq              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id        text NOT NULL,
    id               uuid NOT NULL,
    event_key        text NOT NULL,
    schema_version   text NOT NULL,
    schema_major     integer NOT NULL,
    source           text NOT NULL,
    type             text NOT NULL,
    time             timestamptz NOT NULL,
    subject          text,
    datacontenttype  text,
    dataschema       text,
    traceparent      text,
    tracestate       text,
    header_keys      bytea[] NOT NULL,
    header_values    bytea[] NOT NULL,
    payload          bytea NOT NULL,
    topic            text NOT NULL,
    kafka_partition  integer NOT NULL,
    kafka_offset     bigint NOT NULL,
    received_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, id)
);
INSERT INTO events OVERRIDING SYSTEM VALUE SELECT * FROM events_v3 ORDER BY seq ON CONFLICT DO NOTHING;
SELECT setval(pg_get_serial_sequence('events', 'seq'), (SELECT last_value FROM events_seq_v3),
              (SELECT is_called FROM events_seq_v3));
DROP TABLE events_v3;
