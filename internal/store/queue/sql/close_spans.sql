WITH u AS (
    SELECT u.id, max(u.finished) AS finished FROM unnest(@subs::uuid[], @finished::timestamptz[]) AS u (id, finished) GROUP BY u.id
), open AS (
    SELECT id, last_failure_at, span_reported FROM subscriptions
    WHERE id = ANY(@subs) AND failing_since IS NOT NULL ORDER BY id FOR UPDATE
), closed AS (
    UPDATE subscriptions s SET failing_since = NULL, last_failure_at = NULL, span_failures = 0
    FROM u JOIN open o USING (id)
    WHERE s.id = u.id AND NOT o.span_reported AND o.last_failure_at <= u.finished
)
SELECT o.id FROM open o JOIN u USING (id) WHERE o.span_reported AND o.last_failure_at <= u.finished
