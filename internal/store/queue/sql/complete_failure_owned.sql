-- The attempt of a job still leased to its owner: numbered, and the job
-- moves on, dead when exhausted, else pending at the retry.
WITH job AS (
    UPDATE delivery_jobs SET
        state = CASE WHEN @dead THEN 'dead' ELSE 'pending' END,
        dead_reason = CASE WHEN @dead THEN 'exhausted' END,
        dead_at = CASE WHEN @dead THEN @finished::timestamptz END,
        next_attempt_at = CASE WHEN @dead THEN next_attempt_at ELSE @retry_at END,
        attempts = attempts + 1, recorded_attempts = recorded_attempts + 1,
        lease_owner = NULL, lease_until = NULL, last_error = @last_error, last_status = @status, updated_at = @finished
    WHERE id = @job_id
    RETURNING recorded_attempts
)
INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome, status_code, error, response_snippet)
SELECT @delivery_id, @job_id, job.recorded_attempts, @started_at, @duration_ms, 'failed', @status, @last_error, @response FROM job
RETURNING attempt
