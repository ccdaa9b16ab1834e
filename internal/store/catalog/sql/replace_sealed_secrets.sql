UPDATE subscriptions
SET sink_credentials = NULLIF(@next_credentials, ''),
    signing_secret   = NULLIF(@next_signing, ''),
    previous_secret  = NULLIF(@next_previous, '')
WHERE id = @id
  AND COALESCE(sink_credentials, '') = @was_credentials
  AND COALESCE(signing_secret, '')   = @was_signing
  AND COALESCE(previous_secret, '')  = @was_previous
