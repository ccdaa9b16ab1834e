WITH u AS (
    SELECT *, 'in_flight'::text AS held_state FROM unnest(@ids::uuid[], @job_ids::uuid[], @owners::text[], @started::timestamptz[],
                         @finished::timestamptz[], @durations_ms::bigint[], @statuses::int[], @errors::text[],
                         @responses::bytea[])
        AS u (id, job_id, owner, started_at, finished, duration_ms, status_code, error, response)
),
-- The attempt is folded into the job it moves (migration 24): no attempt
-- row.
owned AS (
    UPDATE delivery_jobs j SET state = 'succeeded', succeeded_at = u.finished, attempts = j.attempts + 1,
        recorded_attempts = j.recorded_attempts + 1, lease_owner = NULL, lease_until = NULL,
        last_error = NULL, last_status = u.status_code, updated_at = u.finished,
        succeeded_attempt_id = u.id, succeeded_attempt = j.recorded_attempts + 1, succeeded_started_at = u.started_at,
        succeeded_duration_ms = u.duration_ms, succeeded_error = u.error, succeeded_response = u.response
    FROM u
    WHERE j.id = ANY(@job_ids) AND j.id = u.job_id AND j.state = u.held_state AND j.lease_owner = u.owner
    RETURNING j.id AS job_id, u.id, j.recorded_attempts
),
-- An attempt already folded into its job was recorded by an earlier call
-- whose commit answer was lost: hubctl_attempt_already_folded fails the
-- statement as the attempts' primary key fails a second row.
late AS (
    UPDATE delivery_jobs j SET recorded_attempts = j.recorded_attempts + 1
    FROM (SELECT * FROM u WHERE u.job_id NOT IN (SELECT job_id FROM owned)) u
    WHERE j.id = ANY(@job_ids) AND j.id = u.job_id AND NOT (j.state = 'in_flight' AND j.lease_owner IS NOT DISTINCT FROM u.owner)
        AND CASE WHEN j.succeeded_attempt_id = u.id THEN hubctl_attempt_already_folded(u.id) ELSE true END
    RETURNING j.id, j.recorded_attempts
),
inserted AS (
    INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome, status_code, error, response_snippet)
    SELECT u.id, u.job_id, l.recorded_attempts, u.started_at, u.duration_ms, 'succeeded', u.status_code, u.error, u.response
    FROM u JOIN late l ON l.id = u.job_id
    RETURNING id, attempt
)
SELECT id, recorded_attempts, true FROM owned
UNION ALL
SELECT id, attempt, false FROM inserted
