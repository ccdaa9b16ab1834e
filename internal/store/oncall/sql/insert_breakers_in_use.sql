INSERT INTO breaker_states (owner, tenant_id, destination, state, open_until)
SELECT @owner, t, d, s, u FROM unnest(@tenants::text[], @dests::text[], @states::text[], @until::timestamptz[]) AS b (t, d, s, u)
WHERE
    EXISTS (SELECT 1 FROM subscriptions s WHERE s.tenant_id = t AND s.destination = d AND s.deleted_at IS NULL AND s.enabled)
