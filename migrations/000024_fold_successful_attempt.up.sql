-- The successful attempt of a job, folded into the job by the update that
-- records the success, instead of a delivery_attempts row (heap, primary
-- key and job index: about 305 bytes of WAL per delivery). Attempt rows
-- stay for failures and for results recorded after the job's lease was
-- recovered (late). Its status is the job's last_status, which nothing
-- changes once a job has succeeded; succeeded_error is the text of a
-- success that carried one (no sink writes one today), kept so that
-- reading the attempt back gives what the row gave. The folded attempt
-- lives and dies with its job's partition. Readers put it back in line
-- with the job's attempt rows (internal/store/catalog).
ALTER TABLE delivery_jobs
    ADD COLUMN succeeded_attempt_id uuid,
    ADD COLUMN succeeded_attempt integer,
    ADD COLUMN succeeded_started_at timestamptz,
    ADD COLUMN succeeded_duration_ms integer,
    ADD COLUMN succeeded_error text,
    ADD COLUMN succeeded_response bytea;

-- X-Lerian-Delivery-Id lookups of a folded attempt. Partial: only the
-- success update writes an entry, and only for a folded attempt.
CREATE INDEX delivery_jobs_succeeded_attempt ON delivery_jobs (succeeded_attempt_id)
    WHERE succeeded_attempt_id IS NOT NULL;

-- Recording an attempt twice (a retry after a lost commit answer) failed
-- on the attempts' primary key, which is how CompleteSuccesses tells it
-- from a real failure (internal/store/queue, alreadyRecorded). A folded
-- attempt has no row to collide with: the recording statement calls this
-- when it finds its attempt already folded into the job, and it fails the
-- same way.
CREATE FUNCTION hubctl_attempt_already_folded(attempt_id uuid) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RAISE EXCEPTION 'attempt % is already recorded in its job', attempt_id
        USING ERRCODE = 'unique_violation', TABLE = 'delivery_attempts', CONSTRAINT = 'delivery_attempts_pkey';
END
$$;
