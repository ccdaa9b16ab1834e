INSERT INTO subscriptions (id, tenant_id, name, sink_type, sink_config, sink_credentials,
    sink_credential_fields, destination, event_types, schema_major, origin, retry_schedule,
    attempt_timeout_ms, enabled, verification_state, verification_error, verified_at,
    signing_secret, previous_secret, previous_secret_expires_at, created_at, updated_at, filter,
    signature_scheme, previous_signature_scheme, ordering, rate_limit)
VALUES (@id, @tenant_id, @name, @sink_type, @sink_config, @sink_credentials, @sink_credential_fields, @destination, @event_types, @schema_major, @origin, @retry_schedule, @attempt_timeout_ms, @enabled, @verification_state, @verification_error, @verified_at, @signing_secret, @previous_secret, @previous_secret_expires_at, @created_at, @created_at, @filter,
    @signature_scheme, @previous_signature_scheme, @ordering, @rate_limit)
RETURNING id, tenant_id, name, sink_type, sink_config, sink_credentials, sink_credential_fields,
    destination, event_types, schema_major, origin, retry_schedule, attempt_timeout_ms, enabled,
    verification_state, verification_error, verified_at, disabled_reason, failing_since, last_failure_at,
    signing_secret, previous_secret, previous_secret_expires_at, created_at, updated_at, filter,
    signature_scheme, previous_signature_scheme, ordering, coalesce(rate_limit, 0)
