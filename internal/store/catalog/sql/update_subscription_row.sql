UPDATE subscriptions SET
    name = @name, sink_config = @sink_config, sink_credentials = @sink_credentials, sink_credential_fields = @sink_credential_fields,
    destination = @destination, event_types = @event_types, schema_major = @schema_major, origin = @origin, retry_schedule = @retry_schedule,
    attempt_timeout_ms = @attempt_timeout_ms, enabled = @enabled, verification_state = @verification_state, verification_error = @verification_error,
    verified_at = @verified_at, disabled_reason = @disabled_reason, failing_since = @failing_since, last_failure_at = @last_failure_at,
    span_failures = CASE WHEN @failing_since::timestamptz IS NULL THEN 0 ELSE span_failures END,
    span_reported = span_reported AND @failing_since::timestamptz IS NOT NULL,
    signing_secret = @signing_secret, previous_secret = @previous_secret, previous_secret_expires_at = @previous_secret_expires_at,
    filter = @filter, signature_scheme = @signature_scheme, previous_signature_scheme = @previous_signature_scheme,
    ordering = @ordering, rate_limit = @rate_limit, updated_at = greatest(@at::timestamptz, updated_at + interval '1 microsecond')
WHERE id = @id
RETURNING id, tenant_id, name, sink_type, sink_config, sink_credentials, sink_credential_fields,
    destination, event_types, schema_major, origin, retry_schedule, attempt_timeout_ms, enabled,
    verification_state, verification_error, verified_at, disabled_reason, failing_since, last_failure_at,
    signing_secret, previous_secret, previous_secret_expires_at, created_at, updated_at, filter,
    signature_scheme, previous_signature_scheme, ordering, coalesce(rate_limit, 0)
