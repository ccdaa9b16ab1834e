DELETE FROM idempotency_keys WHERE scope = @scope AND key = @key AND created_at = @claimed_at AND state = 'in_progress'
