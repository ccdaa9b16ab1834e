-- Ordered delivery and rate limits per subscription, each opt-in
-- (docs/api.md, docs/concepts.md).
-- ordering: 'none', or the key deliveries are ordered by: the tenant or
-- the event's subject. rate_limit: deliveries per second; NULL is none.
ALTER TABLE subscriptions
    ADD COLUMN ordering text NOT NULL DEFAULT 'none' CHECK (ordering IN ('none', 'tenant', 'subject')),
    ADD COLUMN rate_limit double precision CHECK (rate_limit IS NULL OR (rate_limit > 0 AND rate_limit <= 100000));

-- A job's ordering key, set at match time; NULL for a subscription without
-- ordering, so unordered jobs cost nothing more. A keyed job is claimed
-- only when no live job of its subscription and key has a lower seq: the
-- claim asks that of this index, which holds live keyed jobs alone.
ALTER TABLE delivery_jobs ADD COLUMN ordering_key text;
CREATE INDEX delivery_jobs_ordered ON delivery_jobs (subscription_id, ordering_key, event_seq)
    WHERE ordering_key IS NOT NULL AND state IN ('pending', 'in_flight');
-- ... and only when no job of its key is in flight, whatever its seq (a
-- replayed dead letter is older than the job it finds in flight): at most
-- one row per key.
CREATE INDEX delivery_jobs_ordered_in_flight ON delivery_jobs (subscription_id, ordering_key)
    WHERE ordering_key IS NOT NULL AND state = 'in_flight';

-- The rate limiter of each subscription with a rate_limit (GCRA): tat is
-- the theoretical arrival time, the end of the slots granted so far, one
-- every 1/rate_limit seconds; busy_since is where that run of slots began
-- (the current rate is read from the two). Claims move tat forward.
CREATE TABLE subscription_rates (
    subscription_id  uuid PRIMARY KEY REFERENCES subscriptions (id) ON DELETE CASCADE,
    tat              timestamptz NOT NULL,
    busy_since       timestamptz NOT NULL
);
