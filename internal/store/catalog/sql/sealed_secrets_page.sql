SELECT id, COALESCE(sink_credentials, ''), COALESCE(signing_secret, ''), COALESCE(previous_secret, '')
FROM subscriptions
WHERE id > @after
  AND (sink_credentials IS NOT NULL OR signing_secret IS NOT NULL OR previous_secret IS NOT NULL)
ORDER BY id
LIMIT @limit
