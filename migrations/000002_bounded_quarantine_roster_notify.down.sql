DROP TRIGGER IF EXISTS tenants_notify_roster ON tenants;
DROP FUNCTION IF EXISTS hubctl_notify_roster();
ALTER TABLE quarantine
    DROP COLUMN IF EXISTS value_truncated,
    DROP COLUMN IF EXISTS value_sha256,
    DROP COLUMN IF EXISTS value_size;
