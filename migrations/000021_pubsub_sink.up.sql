-- The pubsub sink type (docs/concepts.md, Sinks).
ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_sink_type_known;
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_sink_type_known
    CHECK (sink_type IN ('webhook', 'sqs', 'rabbitmq', 'eventbridge', 'nats', 's3', 'kafka', 'pubsub', 'pull'));
