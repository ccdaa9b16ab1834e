-- What operators see across instances: each running hub's heartbeat with a
-- snapshot of its own counters (hubctl top reads them), the circuit
-- breakers each process holds open (breakers are per process; subs get
-- shows the worst of the live ones), and why a job was last handed back
-- without an attempt.

CREATE TABLE hub_instances (
    owner         text PRIMARY KEY,
    role          text NOT NULL,
    version       text NOT NULL,
    started_at    timestamptz NOT NULL,
    heartbeat_at  timestamptz NOT NULL,
    -- The instance's counters and gauges at heartbeat_at (internal/observe
    -- Stats as JSON): never payloads, secrets or header values.
    stats         jsonb NOT NULL DEFAULT '{}'
);

-- Rows of one owner are replaced together at each heartbeat; a closed
-- breaker has no row. Rows of an instance whose heartbeat stopped are
-- ignored by readers and removed by the next instance's heartbeat.
CREATE TABLE breaker_states (
    owner        text NOT NULL REFERENCES hub_instances (owner) ON DELETE CASCADE,
    tenant_id    text NOT NULL,
    destination  text NOT NULL,
    state        text NOT NULL CHECK (state IN ('open', 'half_open')),
    open_until   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, destination, owner)
);

-- A job handed back without an attempt (its destination's breaker open)
-- says why until its next attempt: shed_at later than its last attempt.
ALTER TABLE delivery_jobs ADD COLUMN shed_reason text, ADD COLUMN shed_at timestamptz;
