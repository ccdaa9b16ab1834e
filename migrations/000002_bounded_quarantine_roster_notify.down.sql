DROP TRIGGER IF EXISTS tenants_notify_roster ON tenants;
DROP FUNCTION IF EXISTS hubctl_notify_roster();
