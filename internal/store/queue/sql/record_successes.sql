WITH u AS (
    SELECT *, 'in_flight'::text AS held_state FROM unnest(@ids::uuid[], @job_ids::uuid[], @owners::text[], @started::timestamptz[],
                         @finished::timestamptz[], @durations_ms::bigint[], @statuses::int[], @errors::text[],
                         @responses::bytea[])
        AS u (id, job_id, owner, started_at, finished, duration_ms, status_code, error, response)
),
owned AS (
    UPDATE delivery_jobs j SET state = 'succeeded', succeeded_at = u.finished, attempts = j.attempts + 1,
        recorded_attempts = j.recorded_attempts + 1, lease_owner = NULL, lease_until = NULL,
        last_error = NULL, last_status = u.status_code, updated_at = u.finished
    FROM u
    WHERE j.id = ANY(@job_ids) AND j.id = u.job_id AND j.state = u.held_state AND j.lease_owner = u.owner
    RETURNING j.id, j.recorded_attempts
),
late AS (
    UPDATE delivery_jobs j SET recorded_attempts = j.recorded_attempts + 1
    FROM (SELECT * FROM u WHERE u.job_id NOT IN (SELECT id FROM owned)) u
    WHERE j.id = u.job_id AND NOT (j.state = 'in_flight' AND j.lease_owner IS NOT DISTINCT FROM u.owner)
    RETURNING j.id, j.recorded_attempts
),
numbered AS (
    SELECT id, recorded_attempts, true AS owned FROM owned
    UNION ALL
    SELECT id, recorded_attempts, false FROM late
),
inserted AS (
    INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome, status_code, error, response_snippet)
    SELECT u.id, u.job_id, n.recorded_attempts, u.started_at, u.duration_ms, 'succeeded', u.status_code, u.error, u.response
    FROM u JOIN numbered n ON n.id = u.job_id
    RETURNING id, job_id, attempt
)
SELECT i.id, i.attempt, n.owned FROM inserted i JOIN numbered n ON n.id = i.job_id
