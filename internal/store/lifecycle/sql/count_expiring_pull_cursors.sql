SELECT count(*) FROM pull_cursors
WHERE cursor_seq < (
    SELECT max(event_seq) FROM pull_entries e
    WHERE e.subscription_id = pull_cursors.subscription_id AND e.event_seq >= @lo AND e.event_seq < @hi
)
