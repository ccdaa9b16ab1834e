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
