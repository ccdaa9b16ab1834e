-- A pull entry's age is its event's: the first retained event from the
-- partition's range on, when the partition holds any entry.
SELECT CASE WHEN EXISTS (SELECT 1 FROM pull_entries WHERE event_seq >= @lo AND event_seq < @hi)
    THEN (SELECT received_at FROM events WHERE seq >= @from ORDER BY seq LIMIT 1) END
