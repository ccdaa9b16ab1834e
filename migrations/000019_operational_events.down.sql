DROP TABLE operational_outbox;
DROP TABLE dead_letter_reports;
ALTER TABLE subscriptions DROP COLUMN span_reported, DROP COLUMN span_failures;
