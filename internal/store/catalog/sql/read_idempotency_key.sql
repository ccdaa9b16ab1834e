SELECT fingerprint, state = 'done', status, location, response, created_at
FROM idempotency_keys WHERE scope = @scope AND key = @key
