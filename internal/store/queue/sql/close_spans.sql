UPDATE subscriptions s SET failing_since = NULL, last_failure_at = NULL
FROM (SELECT u.id, max(u.finished) AS finished FROM unnest(@subs::uuid[], @finished::timestamptz[]) AS u (id, finished) GROUP BY u.id) u
WHERE s.id = u.id AND s.id IN (SELECT id FROM subscriptions WHERE id = ANY(@subs) AND failing_since IS NOT NULL ORDER BY id FOR UPDATE)
  AND s.last_failure_at <= u.finished
