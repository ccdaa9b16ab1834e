-- A seq below which lies every event received before @at, NULL when no
-- event was received at or after @at: a binary search over seqs for one
-- whose first event at or above it was received at or after @at. Whatever
-- seq it ends on, the event found there proves the bound, so received_at
-- being only nearly in seq order costs tightness, never correctness. Each
-- step is one descent of the events' seq index.
WITH RECURSIVE top (seq) AS (
    SELECT coalesce((SELECT e.seq FROM events e ORDER BY e.seq DESC LIMIT 1), 0) + 1),
search (lo, hi, steps) AS (
    SELECT 0::bigint, top.seq, 0 FROM top
    UNION ALL
    SELECT CASE WHEN p.later THEN s.lo ELSE m.mid + 1 END,
           CASE WHEN p.later THEN m.mid ELSE s.hi END,
           s.steps + 1
    FROM search s
    CROSS JOIN LATERAL (SELECT s.lo + (s.hi - s.lo) / 2 AS mid) m
    CROSS JOIN LATERAL (
        SELECT coalesce((SELECT e.received_at >= @at FROM events e WHERE e.seq >= m.mid ORDER BY e.seq LIMIT 1), true) AS later) p
    WHERE s.lo < s.hi AND s.steps < 64)
SELECT CASE WHEN s.hi < top.seq THEN s.hi END
FROM search s, top
ORDER BY s.steps DESC
LIMIT 1
