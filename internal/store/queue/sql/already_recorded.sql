SELECT a.id, a.attempt FROM delivery_attempts a
JOIN unnest(@ids::uuid[], @started::timestamptz[]) AS u (id, started_at) ON a.id = u.id AND a.started_at = u.started_at
