-- Operational events (docs/operational-events.md): the hub's own events
-- about a tenant's subscriptions, written into the tenant's inbox in the
-- transaction of the change they report.
--
-- span_failures counts the failed attempts of the open failure span (any
-- success closes the span, so they are consecutive); span_reported says
-- hub.subscription_failing was written for it, so it is written once per
-- span and the success that closes it writes hub.subscription_recovered.
ALTER TABLE subscriptions
    ADD COLUMN span_failures integer NOT NULL DEFAULT 0,
    ADD COLUMN span_reported boolean NOT NULL DEFAULT false;

-- hub.deliveries_dead_lettered comes at most once a minute per
-- subscription and reason: one row per pair whose window is open, since
-- window_start, when the first dead letters after a quiet minute were
-- reported; dead and event_ids (up to 100) are what went dead since, to be
-- reported together when the window ends, in the transaction that ends it.
CREATE TABLE dead_letter_reports (
    subscription_id uuid NOT NULL,
    reason          text NOT NULL,
    tenant_id       text NOT NULL,
    window_start    timestamptz NOT NULL,
    dead            bigint NOT NULL,
    event_ids       uuid[] NOT NULL,
    PRIMARY KEY (subscription_id, reason)
);
CREATE INDEX dead_letter_reports_due ON dead_letter_reports (window_start);

-- With STREAMING_HUB_OPERATIONAL_TOPIC set, each operational event is also
-- kept here, in the transaction that writes it, until the relay has
-- produced it to the topic: the relay reads what committed, below the
-- ingest horizon, in seq order, and deletes what the broker acknowledged.
CREATE TABLE operational_outbox (
    seq        bigint PRIMARY KEY,
    tenant_id  text NOT NULL,
    id         uuid NOT NULL,
    event_key  text NOT NULL,
    type       text NOT NULL,
    subject    text NOT NULL,
    time       timestamptz NOT NULL,
    payload    bytea NOT NULL
);
