-- The keys are named (@subscriptions with @keys, pairwise), or are those of
-- the jobs @ids for a caller that does not know them; UNION drops repeats.
WITH keys AS (
    SELECT subscription_id, ordering_key FROM unnest(@subscriptions::uuid[], @keys::text[]) AS k (subscription_id, ordering_key)
    UNION
    SELECT subscription_id, ordering_key FROM delivery_jobs WHERE id = ANY(@ids::uuid[]) AND ordering_key IS NOT NULL
),
heads AS (
    SELECT k.subscription_id, k.ordering_key, h.event_seq FROM keys k
    CROSS JOIN LATERAL (
        SELECT b.event_seq, b.state, b.next_attempt_at FROM delivery_jobs b
        WHERE b.subscription_id = k.subscription_id AND b.ordering_key = k.ordering_key
          AND b.ordering_key IS NOT NULL AND b.state IN ('pending', 'in_flight')
        ORDER BY b.event_seq LIMIT 1) h
    WHERE h.state = 'pending' AND h.next_attempt_at = 'infinity'
)
UPDATE delivery_jobs j SET next_attempt_at = least(j.created_at, @at), updated_at = @at
FROM heads h
WHERE j.subscription_id = h.subscription_id AND j.ordering_key = h.ordering_key AND j.event_seq = h.event_seq
  AND j.state = 'pending' AND j.next_attempt_at = 'infinity'
