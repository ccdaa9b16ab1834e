SELECT c.cursor_seq, c.expired_seq
FROM pull_cursors c
JOIN subscriptions s ON s.id = c.subscription_id
WHERE c.subscription_id = @subscription_id AND s.tenant_id = @tenant_id AND s.deleted_at IS NULL
FOR UPDATE OF c
