UPDATE subscriptions
SET deleted_at = @at, updated_at = greatest(@at::timestamptz, updated_at + interval '1 microsecond'),
    sink_credentials = NULL, signing_secret = NULL,
    previous_secret = NULL, previous_secret_expires_at = NULL,
    previous_signature_scheme = NULL
WHERE id = @id AND tenant_id = @tenant_id AND deleted_at IS NULL
RETURNING destination, name
