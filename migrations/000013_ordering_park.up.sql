-- A keyed job that a claim finds queued behind an earlier job of its key
-- is parked: pending with next_attempt_at at infinity, so it leaves the
-- claim's walk of delivery_jobs_due (docs/architecture.md, Delivery
-- controls meet in the claim). Whatever ends or hands back the job ahead
-- of it releases the key's head; this index lets the sweep that catches a
-- missed release find the parked jobs, key by key, without reading every
-- pending job. It holds parked jobs alone: nothing when no subscription
-- orders.
CREATE INDEX delivery_jobs_parked ON delivery_jobs (subscription_id, ordering_key, event_seq)
    WHERE state = 'pending' AND next_attempt_at = 'infinity';
