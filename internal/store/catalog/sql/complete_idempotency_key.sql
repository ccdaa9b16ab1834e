UPDATE idempotency_keys SET state = 'done', status = @status, location = nullif(@location, ''), response = @sealed_response
WHERE scope = @scope AND key = @key AND created_at = @claimed_at AND state = 'in_progress'
