-- hubctl schema, version 1. The whole contract of SPEC.md lives here: tenants
-- and their API keys, subscriptions, the event inbox, quarantine, delivery jobs
-- and attempts, pull streams and cursors, and the Kafka offsets that make
-- ingest consume-once.

CREATE TABLE tenants (
    id          text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'),
    status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Tokens are 32 random bytes, so a fast hash (SHA-256) is as good as a slow
-- one here and keeps authentication a single index probe.
CREATE TABLE tenant_api_keys (
    id            uuid PRIMARY KEY,
    tenant_id     text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name          text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    token_hash    bytea NOT NULL UNIQUE,
    token_prefix  text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_used_at  timestamptz,
    revoked_at    timestamptz
);
CREATE INDEX tenant_api_keys_by_tenant ON tenant_api_keys (tenant_id, created_at, id);

-- Secrets and credentials are AES-256-GCM envelopes (internal/crypto) bound to
-- the row id and column name; sink_config holds only what may be shown.
-- destination is the circuit-breaker key derived from sink_config, free of
-- credentials. Rows are soft-deleted so their jobs and history stay readable
-- and a deleted subscription can be told apart from a missing one.
CREATE TABLE subscriptions (
    id                          uuid PRIMARY KEY,
    tenant_id                   text NOT NULL REFERENCES tenants (id),
    name                        text NOT NULL CHECK (char_length(name) <= 200),
    sink_type                   text NOT NULL CHECK (sink_type IN ('webhook', 'sqs', 'rabbitmq', 'eventbridge', 'pull')),
    sink_config                 jsonb NOT NULL DEFAULT '{}',
    sink_credentials            text,
    -- The top-level keys of the credentials object. Names are not secret;
    -- keeping them lets reads show each as "****" without decrypting.
    sink_credential_fields      text[] NOT NULL DEFAULT '{}',
    destination                 text NOT NULL,
    event_types                 text[] NOT NULL CHECK (cardinality(event_types) > 0),
    schema_major                integer NOT NULL DEFAULT 1 CHECK (schema_major >= 1),
    origin                      text,
    -- Go durations as the user gave them; dispatch falls back to the default
    -- curve when a stored value no longer parses (docs/concepts.md, Retries).
    retry_schedule              text[],
    attempt_timeout_ms          integer NOT NULL DEFAULT 10000 CHECK (attempt_timeout_ms BETWEEN 1000 AND 60000),
    enabled                     boolean NOT NULL DEFAULT true,
    verification_state          text NOT NULL DEFAULT 'pending' CHECK (verification_state IN ('pending', 'active', 'failed')),
    verification_error          text,
    verified_at                 timestamptz,
    disabled_reason             text CHECK (disabled_reason IN ('auto_disabled')),
    failing_since               timestamptz,
    last_failure_at             timestamptz,
    signing_secret              text,
    previous_secret             text,
    previous_secret_expires_at  timestamptz,
    created_at                  timestamptz NOT NULL DEFAULT now(),
    updated_at                  timestamptz NOT NULL DEFAULT now(),
    deleted_at                  timestamptz,
    CHECK ((sink_type = 'webhook') = (signing_secret IS NOT NULL) OR deleted_at IS NOT NULL)
);
CREATE INDEX subscriptions_by_tenant ON subscriptions (tenant_id, created_at, id) WHERE deleted_at IS NULL;
-- Matching reads only the live, deliverable subscriptions of one tenant.
CREATE INDEX subscriptions_matchable ON subscriptions (tenant_id)
    WHERE deleted_at IS NULL AND enabled AND verification_state = 'active';

-- The inbox. seq is arrival order; ingest serialises its commits so that seq
-- order is also commit order, which is what lets a pull cursor never skip a
-- row that was still in flight. payload is the record value byte for byte;
-- headers keeps every record header (keys and values are bytes on the wire).
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

-- Poison records, kept raw for forensics and never retried. One row per
-- stream position: reprocessing the same offset cannot quarantine it twice.
CREATE TABLE quarantine (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    reason           text NOT NULL,
    detail           text NOT NULL DEFAULT '',
    topic            text NOT NULL,
    kafka_partition  integer NOT NULL,
    kafka_offset     bigint NOT NULL,
    record_key       bytea,
    header_keys      bytea[] NOT NULL,
    header_values    bytea[] NOT NULL,
    value            bytea NOT NULL,
    received_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (topic, kafka_partition, kafka_offset)
);
CREATE INDEX quarantine_newest ON quarantine (received_at DESC, id DESC);

-- One job per (event, push subscription). State machine (ARCHITECTURE.md):
-- pending -> in_flight -> succeeded | pending (retry) | dead; lease expiry
-- returns in_flight -> pending with recoveries + 1; replay dead -> pending;
-- subscription delete pending -> canceled.
-- event_seq has no foreign key: ingest creates a job in the transaction that
-- inserts its event, and events are never deleted while jobs refer to them.
-- The key's check would lock the event row once per job; on the ingest hot
-- path that doubled the cost of creating jobs (BenchmarkIngest, internal/ingest).
CREATE TABLE delivery_jobs (
    id               uuid PRIMARY KEY,
    tenant_id        text NOT NULL,
    subscription_id  uuid NOT NULL REFERENCES subscriptions (id),
    event_seq        bigint NOT NULL,
    state            text NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'in_flight', 'succeeded', 'dead', 'canceled')),
    attempts         integer NOT NULL DEFAULT 0,
    -- The attempt rows recorded for this job, late ones included: the next
    -- attempt's number is this + 1. Unlike attempts (the retry budget) it is
    -- never reset, so a replayed job numbers on from where it stopped, and
    -- numbering an attempt is part of the job's own update instead of a
    -- lock and a max() over its attempts.
    recorded_attempts integer NOT NULL DEFAULT 0,
    recoveries       integer NOT NULL DEFAULT 0,
    -- clock_timestamp(), not now(): ingest inserts jobs under its lock, so
    -- the time of the insert, unlike the transaction's start, follows seq
    -- order, and dispatch, which claims by (next_attempt_at, event_seq),
    -- starts first attempts in seq order (docs/concepts.md, Ordering).
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
-- Every index here is paid for on the ingest hot path (one insert per job),
-- so there are only two besides the keys. Due-job claim, interleaved by
-- tenant: a loose index scan over tenant_id, then each tenant's oldest due
-- jobs. A subscription's deliveries, newest first, read the unique
-- (subscription_id, event_seq) index backwards.
CREATE INDEX delivery_jobs_due ON delivery_jobs (tenant_id, next_attempt_at, event_seq) WHERE state = 'pending';
-- Lease-expiry recovery and dead-letter listing: partial, so a new job
-- (pending) touches neither.
CREATE INDEX delivery_jobs_leases ON delivery_jobs (lease_until) WHERE state = 'in_flight';
CREATE INDEX delivery_jobs_dead ON delivery_jobs (tenant_id, dead_at DESC, id) WHERE state = 'dead';

-- One row per attempt; id is the X-Lerian-Delivery-Id the destination saw.
-- job_id has no foreign key: an attempt is only ever inserted by the
-- statement that updates its job (numbering it), and jobs are never
-- deleted. The key's check ran a trigger query per attempt on dispatch's
-- hot path (BenchmarkDispatch, internal/dispatch).
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

-- A pull subscription's stream: the seqs of its matched events. Reading is
-- the ack, so the durable cursor lives beside it. event_seq has no foreign
-- key, for the reason given at delivery_jobs.
CREATE TABLE pull_entries (
    subscription_id  uuid NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    event_seq        bigint NOT NULL,
    PRIMARY KEY (subscription_id, event_seq)
);

CREATE TABLE pull_cursors (
    subscription_id  uuid PRIMARY KEY REFERENCES subscriptions (id) ON DELETE CASCADE,
    cursor_seq       bigint NOT NULL DEFAULT 0 CHECK (cursor_seq >= 0),
    updated_at       timestamptz NOT NULL DEFAULT now()
);

-- The next offset to read per partition, written in the same transaction as
-- the records before it, so a lost Kafka commit never re-ingests them.
CREATE TABLE kafka_offsets (
    consumer_group   text NOT NULL,
    topic            text NOT NULL,
    kafka_partition  integer NOT NULL,
    next_offset      bigint NOT NULL CHECK (next_offset >= 0),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group, topic, kafka_partition)
);
