-- Idempotency-Key (docs/api.md, Idempotent requests): one row per caller and
-- key. The row is claimed (state in_progress) in a transaction of its own
-- before the request's work starts, so concurrent duplicates find it and do
-- not do the work again; the response is stored when the work is done.
-- scope is the caller: 'admin', or 'tenant:<id>' for a tenant API key.
-- fingerprint is SHA-256 over method, path, query, acting tenant and body.
-- response is the body sealed under the KEK (internal/crypto), bound to
-- the row's scope and key: responses hold secrets (a created API key, a
-- signing secret). The table is small (24 h of POSTs) and not partitioned;
-- retention deletes rows older than 24 h.
CREATE TABLE idempotency_keys (
    scope        text NOT NULL,
    key          text NOT NULL CHECK (char_length(key) BETWEEN 1 AND 255),
    fingerprint  bytea NOT NULL,
    state        text NOT NULL DEFAULT 'in_progress' CHECK (state IN ('in_progress', 'done')),
    status       integer,
    location     text,
    response     text,
    created_at   timestamptz NOT NULL,
    CHECK ((state = 'done') = (status IS NOT NULL)),
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
