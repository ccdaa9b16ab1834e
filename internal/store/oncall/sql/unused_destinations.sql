SELECT t, d FROM unnest(@tenants::text[], @dests::text[]) AS b (t, d)
WHERE NOT
    EXISTS (SELECT 1 FROM subscriptions s WHERE s.tenant_id = t AND s.destination = d AND s.deleted_at IS NULL AND s.enabled)
