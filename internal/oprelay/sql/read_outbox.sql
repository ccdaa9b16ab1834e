SELECT seq, tenant_id, id, event_key, type, subject, time, payload FROM operational_outbox
WHERE seq < @horizon ORDER BY seq LIMIT @limit
