-- Revision 3's sink types: nats, s3 and kafka (docs/concepts.md, Sinks).
-- The check on sink_type is found by what it checks, as 000016 finds its
-- own: its name depends on the path the schema took.
DO $$
DECLARE
    c text;
BEGIN
    FOR c IN SELECT conname FROM pg_constraint
             WHERE conrelid = 'subscriptions'::regclass AND contype = 'c'
               AND pg_get_constraintdef(oid) LIKE '%sink_type%eventbridge%'
    LOOP
        EXECUTE format('ALTER TABLE subscriptions DROP CONSTRAINT %I', c);
    END LOOP;
END $$;
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_sink_type_known
    CHECK (sink_type IN ('webhook', 'sqs', 'rabbitmq', 'eventbridge', 'nats', 's3', 'kafka', 'pull'));
