-- Whether a job whose event must stay refers to an event of the seq range
-- [lo, hi): a job that will still be attempted, or a dead letter, which
-- can be replayed for as long as deliveries are kept. One probe per state,
-- each through that state's partial index (few rows: only the jobs not yet
-- finished and the dead letters), so the check never reads the finished
-- history.
SELECT
    EXISTS (SELECT 1 FROM delivery_jobs WHERE state = 'pending' AND event_seq >= @lo AND event_seq < @hi)
 OR EXISTS (SELECT 1 FROM delivery_jobs WHERE state = 'in_flight' AND event_seq >= @lo AND event_seq < @hi)
 OR EXISTS (SELECT 1 FROM delivery_jobs WHERE state = 'dead' AND event_seq >= @lo AND event_seq < @hi)
