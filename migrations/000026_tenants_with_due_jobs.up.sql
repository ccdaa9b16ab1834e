-- Which of a batch's tenants have a due pending job (ingest's handover
-- check, docs/architecture.md "First attempts handed over"), asked once per
-- ingest transaction.
--
-- As one statement over the unnested array it was planned on every
-- execution: PostgreSQL keeps custom plans for array parameters, and
-- planning a probe of delivery_jobs considers every day partition and each
-- of their partial indexes, 0.25 ms of PostgreSQL's CPU against 0.04 ms to
-- run it, paid by every small batch of a steady rate. Here the probe takes
-- one tenant, a scalar whose generic plan is the custom one (the jobs are
-- not partitioned by tenant), so after its first executions PL/pgSQL's
-- plan cache keeps the generic plan for the session and the probe is only
-- run.
CREATE FUNCTION hubctl_tenants_with_due_jobs(tenants text[]) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY tenants LOOP
        IF EXISTS (SELECT 1 FROM delivery_jobs j
                   WHERE j.state = 'pending' AND j.tenant_id = t AND j.next_attempt_at <= clock_timestamp()) THEN
            RETURN NEXT t;
        END IF;
    END LOOP;
END
$$;
