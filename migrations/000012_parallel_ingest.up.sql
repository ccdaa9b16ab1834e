-- Ingest batches of different partitions commit concurrently
-- (docs/architecture.md, "Parallel ingest"); two things change for that.

-- 1. event_id_days gets a row per id day and writer slot (a hash of the
-- batch's topic and partition, internal/store idDaySlot), so concurrent
-- batches do not queue on one row per day until they commit. Retention reads
-- the day's highest seq over its slots.
ALTER TABLE event_id_days ADD COLUMN slot integer NOT NULL DEFAULT 0;
ALTER TABLE event_id_days DROP CONSTRAINT event_id_days_pkey;
ALTER TABLE event_id_days ADD PRIMARY KEY (day, slot);

-- 2. The visibility horizon: a seq below which nothing can commit any more.
-- seqs come from a sequence, which hands them out when asked, not at commit,
-- so a reader that saw seq N+1 committed may not move past N while N is in
-- flight. Every ingest transaction, before it draws its first seq, holds a
-- shared transaction advisory lock keyed by -2^62 + the sequence's next
-- value, a bound below every seq it will draw, until it ends. The horizon is the
-- lowest such bound held, or the sequence's next value when none is.
--
-- Why it holds: the function reads the sequence first and the locks second.
-- A writer whose bound it sees in pg_locks draws nothing below the bound; a
-- writer that takes its bound after the lock read draws after the sequence
-- read, so above the last value read; a writer whose lock is gone has
-- committed (locks are released after the commit is visible) or aborted.
-- So a statement run after this one, with a snapshot of its own, sees every
-- row below the horizon that will ever commit.
--
-- Keys: -2^62 + seq keeps them clear of the hub's other advisory locks
-- (positive) and of 32-bit ones such as hashtext's; seqs stay below 2^52
-- for centuries (a day's range is 2^36), so a bound is any key in
-- [-2^62, -2^62 + 2^60). Only this database's locks count.
CREATE FUNCTION ingest_horizon() RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED AS $$
DECLARE
    next_seq bigint;
    lowest_held bigint;
BEGIN
    SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END INTO next_seq FROM events_seq_seq;
    SELECT min(k.key) + 4611686018427387904 INTO lowest_held
    FROM pg_locks l
    CROSS JOIN LATERAL (SELECT (l.classid::bigint << 32) | l.objid::bigint AS key) k
    WHERE l.locktype = 'advisory' AND l.objsubid = 1
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND k.key >= -4611686018427387904 AND k.key < -4611686018427387904 + 1152921504606846976;
    RETURN least(next_seq, lowest_held);
END
$$;
