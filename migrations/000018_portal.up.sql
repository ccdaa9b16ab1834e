-- Portal sign-in (docs/portal.md). A link's token and a session's cookie
-- are 256 random bits, stored only as their SHA-256 (as API keys are), so
-- neither can be read back from the database. tenant_id NULL is the
-- operator console. A link is single-use: redeeming it sets redeemed_at in
-- the statement that creates the session, and a session lives until the
-- link's expires_at or until it is ended (ended_at), whichever comes first.
CREATE TABLE portal_links (
    token_hash   bytea PRIMARY KEY,
    tenant_id    text REFERENCES tenants (id) ON DELETE CASCADE,
    read_only    boolean NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    redeemed_at  timestamptz,
    CHECK (expires_at > created_at)
);
-- Issuing a link deletes the expired links and sessions (there are few:
-- people make them by hand), through these indexes.
CREATE INDEX portal_links_by_expiry ON portal_links (expires_at);

CREATE TABLE portal_sessions (
    id           uuid PRIMARY KEY,
    token_hash   bytea NOT NULL UNIQUE,
    tenant_id    text REFERENCES tenants (id) ON DELETE CASCADE,
    read_only    boolean NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    ended_at     timestamptz,
    CHECK (expires_at > created_at)
);
-- Ending every live session of a tenant at once reads only live ones.
CREATE INDEX portal_sessions_live_by_tenant ON portal_sessions (tenant_id) WHERE ended_at IS NULL;
CREATE INDEX portal_sessions_by_expiry ON portal_sessions (expires_at);
