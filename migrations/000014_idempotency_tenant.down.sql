DROP INDEX idempotency_keys_tenant;
ALTER TABLE idempotency_keys DROP COLUMN tenant_id;
