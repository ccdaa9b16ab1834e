SELECT count(DISTINCT (subscription_id, ordering_key))
FROM delivery_jobs
WHERE ordering_key IS NOT NULL AND state IN ('pending', 'in_flight') AND state = 'pending' AND attempts > 0
  AND next_attempt_at < 'infinity'
