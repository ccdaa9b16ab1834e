SELECT count(*) FROM subscriptions
WHERE deleted_at IS NULL AND NOT enabled AND disabled_reason = 'auto_disabled'
