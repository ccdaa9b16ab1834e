ALTER TABLE subscriptions DROP COLUMN filter;
