WITH RECURSIVE parked (subscription_id, ordering_key, event_seq) AS (
    (SELECT subscription_id, ordering_key, event_seq FROM delivery_jobs
     WHERE state = 'pending' AND next_attempt_at = 'infinity'
     ORDER BY subscription_id, ordering_key, event_seq LIMIT 1)
  UNION ALL
    SELECT n.subscription_id, n.ordering_key, n.event_seq FROM parked p
    CROSS JOIN LATERAL (
        SELECT subscription_id, ordering_key, event_seq FROM delivery_jobs
        WHERE state = 'pending' AND next_attempt_at = 'infinity'
          AND (subscription_id, ordering_key) > (p.subscription_id, p.ordering_key)
        ORDER BY subscription_id, ordering_key, event_seq LIMIT 1) n
),
stranded AS (
    SELECT p.* FROM parked p
    WHERE NOT EXISTS (
        SELECT 1 FROM delivery_jobs b
        WHERE b.subscription_id = p.subscription_id AND b.ordering_key = p.ordering_key
          AND b.ordering_key IS NOT NULL AND b.event_seq < p.event_seq AND b.state IN ('pending', 'in_flight'))
      AND NOT EXISTS (
        SELECT 1 FROM delivery_jobs b
        WHERE b.subscription_id = p.subscription_id AND b.ordering_key = p.ordering_key
          AND b.ordering_key IS NOT NULL AND b.state = 'in_flight')
)
UPDATE delivery_jobs j SET next_attempt_at = least(j.created_at, @now), updated_at = @now
FROM stranded s
WHERE j.subscription_id = s.subscription_id AND j.ordering_key = s.ordering_key AND j.event_seq = s.event_seq
  AND j.state = 'pending' AND j.next_attempt_at = 'infinity'
