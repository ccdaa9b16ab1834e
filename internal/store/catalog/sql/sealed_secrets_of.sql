SELECT COALESCE(sink_credentials, ''), COALESCE(signing_secret, ''), COALESCE(previous_secret, '')
FROM subscriptions WHERE id = @id
