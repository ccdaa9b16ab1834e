-- The older schema knows no pubsub sink. Its subscriptions hold history
-- (jobs, attempts) that cannot be dropped silently, so going down is
-- refused while any exists, deleted ones included: purge their tenants'
-- data or keep this version.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM subscriptions WHERE sink_type = 'pubsub') THEN
        RAISE EXCEPTION 'subscriptions with pubsub sinks exist; the schema before 000021 cannot hold them';
    END IF;
END $$;
ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_sink_type_known;
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_sink_type_known
    CHECK (sink_type IN ('webhook', 'sqs', 'rabbitmq', 'eventbridge', 'nats', 's3', 'kafka', 'pull'));
