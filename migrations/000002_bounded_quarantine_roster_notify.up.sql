-- Every change to the roster (a tenant created, its status changed, or the
-- tenant deleted) notifies hubctl_roster at commit, so every ingest instance
-- reloads its roster at once instead of at its next periodic refresh. One
-- notification per statement: listeners reload the whole roster anyway, and
-- PostgreSQL folds equal notifications of one transaction into one.
CREATE FUNCTION hubctl_notify_roster() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('hubctl_roster', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER tenants_notify_roster
    AFTER INSERT OR DELETE OR UPDATE OF id, status OR TRUNCATE ON tenants
    FOR EACH STATEMENT EXECUTE FUNCTION hubctl_notify_roster();

-- A quarantined record's value as the producer sent it: its size and
-- SHA-256 always, and value_truncated when only its first bytes are kept
-- (a value over STREAMING_HUB_MAX_EVENT_BYTES: docs/api.md, quarantine).
-- Existing rows hold their whole value, so they are measured as they are.
ALTER TABLE quarantine
    ADD COLUMN value_size bigint,
    ADD COLUMN value_sha256 bytea,
    ADD COLUMN value_truncated boolean NOT NULL DEFAULT false;
UPDATE quarantine SET value_size = octet_length(value), value_sha256 = sha256(value);
ALTER TABLE quarantine
    ALTER COLUMN value_size SET NOT NULL,
    ALTER COLUMN value_sha256 SET NOT NULL;
