WITH t AS (INSERT INTO tenants (id) VALUES (@tenant) ON CONFLICT DO NOTHING)
INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, verification_state, signing_secret, deleted_at)
VALUES (gen_random_uuid(), @tenant, 'history', 'webhook', 'https://example.com', '{*}', 'active', 'ciphertext', now())
RETURNING id::text
