UPDATE pull_cursors c SET expired_seq = greatest(c.expired_seq, m.last)
FROM (
    SELECT subscription_id, max(event_seq) AS last FROM pull_entries
    WHERE event_seq >= @lo AND event_seq < @hi
    GROUP BY subscription_id
) m
WHERE c.subscription_id = m.subscription_id AND c.cursor_seq < m.last
