-- The older schema knows no filter_error: such dead letters stay dead, as
-- exhausted ones, with their last_error still naming the filter's failure.
UPDATE delivery_jobs SET dead_reason = 'exhausted' WHERE dead_reason = 'filter_error';
ALTER TABLE delivery_jobs DROP CONSTRAINT delivery_jobs_dead_reason_known;
ALTER TABLE delivery_jobs ADD CONSTRAINT delivery_jobs_dead_reason_check
    CHECK (dead_reason IN ('exhausted', 'poison', 'subscription_disabled'));
