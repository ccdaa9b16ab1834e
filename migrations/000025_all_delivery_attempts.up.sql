-- Every attempt of a job as a delivery_attempts row: the rows (failures
-- and late results) and the successes folded into their jobs (migration
-- 24). Readers that list, look up or recognise attempts read this one
-- definition instead of each putting the folded success back in line
-- with the rows by hand.
--
-- The WHERE is outside the UNION ALL, not in the folded branch: PostgreSQL
-- flattens a UNION ALL into the query that reads it only when no branch
-- has a WHERE of its own. A branch with one stays a subquery that
-- constants and parameters reach but a join condition does not, so
-- joining the view on an attempt's id hashed every job instead of using
-- the partial index on the folded id. Flattened, a join condition reaches
-- each branch's indexes (the attempts' primary key and (job_id, attempt),
-- the jobs' primary key and delivery_jobs_succeeded_attempt); the
-- id IS NOT NULL it adds to the rows' branch is always true. A join
-- condition still does not prune the partitions of a UNION ALL, as a
-- parameter does: a reader that must reach only the day of each outer
-- row's attempt looks it up in a LATERAL subquery kept apart by OFFSET 0.
--
-- Not named delivery_attempts_*: those are the table's partitions. A
-- migration that replaces either table must drop the view first and
-- create it again after.
CREATE VIEW all_delivery_attempts AS
SELECT *
FROM (
    SELECT id, job_id, attempt, started_at, duration_ms, outcome, status_code, error, response_snippet
    FROM delivery_attempts
    UNION ALL
    SELECT succeeded_attempt_id, id, succeeded_attempt, succeeded_started_at, succeeded_duration_ms, 'succeeded', last_status,
           succeeded_error, succeeded_response
    FROM delivery_jobs
) a
WHERE id IS NOT NULL;
