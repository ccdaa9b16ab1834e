-- A binary before parking never releases a parked job: make them all due.
UPDATE delivery_jobs SET next_attempt_at = now() WHERE state = 'pending' AND next_attempt_at = 'infinity';
DROP INDEX delivery_jobs_parked;
