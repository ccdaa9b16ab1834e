-- The tenant an Idempotency-Key's request acted on, so that a tenant
-- purge removes its stored answers with the rest of its rows: a stored
-- response can hold the purged tenant's secrets (a signing secret, an API
-- key), and a tenant created again under the same id must not be answered
-- with them. NULL for a request that acted on no tenant (storage prune).
ALTER TABLE idempotency_keys ADD COLUMN tenant_id text;
UPDATE idempotency_keys SET tenant_id = substr(scope, length('tenant:') + 1) WHERE scope LIKE 'tenant:%';
CREATE INDEX idempotency_keys_tenant ON idempotency_keys (tenant_id) WHERE tenant_id IS NOT NULL;
