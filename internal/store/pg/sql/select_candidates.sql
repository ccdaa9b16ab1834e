SELECT id, tenant_id, sink_type, enabled, verification_state, event_types, schema_major, coalesce(origin, ''),
    coalesce(filter, ''), updated_at, ordering, attempt_timeout_ms, rate_limit IS NOT NULL
FROM subscriptions
WHERE tenant_id = ANY(@tenants) AND deleted_at IS NULL AND enabled AND verification_state = 'active'
ORDER BY tenant_id, id
