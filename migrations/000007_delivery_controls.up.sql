-- Per-subscription delivery controls, each opt-in (docs/api.md).
-- filter: a CEL expression evaluated at match time; NULL matches every event.
ALTER TABLE subscriptions
    ADD COLUMN filter text CHECK (filter IS NULL OR filter <> '');
