DROP TABLE subscription_rates;
DROP INDEX delivery_jobs_ordered_in_flight;
DROP INDEX delivery_jobs_ordered;
ALTER TABLE delivery_jobs DROP COLUMN ordering_key;
ALTER TABLE subscriptions DROP COLUMN ordering, DROP COLUMN rate_limit;
