-- Every folded attempt becomes a delivery_attempts row again before its
-- columns go, so a binary that predates the folding reads it as before.
INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome, status_code, error, response_snippet)
SELECT succeeded_attempt_id, id, succeeded_attempt, succeeded_started_at, succeeded_duration_ms, 'succeeded', last_status,
       succeeded_error, succeeded_response
FROM delivery_jobs
WHERE succeeded_attempt_id IS NOT NULL;

DROP FUNCTION hubctl_attempt_already_folded(uuid);
DROP INDEX delivery_jobs_succeeded_attempt;
ALTER TABLE delivery_jobs
    DROP COLUMN succeeded_attempt_id,
    DROP COLUMN succeeded_attempt,
    DROP COLUMN succeeded_started_at,
    DROP COLUMN succeeded_duration_ms,
    DROP COLUMN succeeded_error,
    DROP COLUMN succeeded_response;
