-- An event whose subscription's content filter fails on it (a missing
-- field, the cost limit, the tenant's filter budget) is kept for that
-- subscription as a dead letter of reason filter_error, replayable once
-- the filter is fixed (docs/concepts.md, Dead letters and poison).
--
-- The check on dead_reason got its name from PostgreSQL, which depends on
-- the path the schema took (000003's down migration builds the table
-- beside its old copy, and the name is taken): it is found by what it
-- checks.
DO $$
DECLARE
    c text;
BEGIN
    FOR c IN SELECT conname FROM pg_constraint
             WHERE conrelid = 'delivery_jobs'::regclass AND contype = 'c'
               AND pg_get_constraintdef(oid) LIKE '%subscription_disabled%'
    LOOP
        EXECUTE format('ALTER TABLE delivery_jobs DROP CONSTRAINT %I', c);
    END LOOP;
END $$;
ALTER TABLE delivery_jobs ADD CONSTRAINT delivery_jobs_dead_reason_known
    CHECK (dead_reason IN ('exhausted', 'poison', 'subscription_disabled', 'filter_error'));
