-- The attempt of a job no longer leased to its owner: numbered under the
-- job's row lock, the job left as it is.
WITH job AS (
    UPDATE delivery_jobs SET recorded_attempts = recorded_attempts + 1 WHERE id = @job_id RETURNING recorded_attempts
)
INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome, status_code, error, response_snippet)
SELECT @delivery_id, @job_id, job.recorded_attempts, @started_at, @duration_ms, 'failed', @status, @last_error, @response FROM job
RETURNING attempt
