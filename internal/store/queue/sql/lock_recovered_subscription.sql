SELECT tenant_id, sink_type, event_types, schema_major, coalesce(origin, ''), coalesce(filter, ''),
       updated_at, deleted_at IS NOT NULL, ordering
FROM subscriptions WHERE id = @subscription_id AND tenant_id = @tenant_id
FOR NO KEY UPDATE
