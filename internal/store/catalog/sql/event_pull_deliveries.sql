SELECT s.id, s.name, s.sink_type, coalesce(c.cursor_seq, 0) >= @seq
FROM subscriptions s
JOIN pull_entries p ON p.subscription_id = s.id AND p.event_seq = @seq
LEFT JOIN pull_cursors c ON c.subscription_id = s.id
WHERE s.tenant_id = @tenant
ORDER BY s.name, s.id
