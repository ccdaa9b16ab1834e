UPDATE delivery_jobs j SET
    recoveries = CASE WHEN j.recoveries >= @poison_threshold THEN j.recoveries ELSE j.recoveries + 1 END,
    state = CASE WHEN j.recoveries >= @poison_threshold THEN 'dead' ELSE 'pending' END,
    dead_reason = CASE WHEN j.recoveries >= @poison_threshold THEN 'poison' END,
    dead_at = CASE WHEN j.recoveries >= @poison_threshold THEN @now::timestamptz END,
    last_error = CASE WHEN j.recoveries >= @poison_threshold
                      THEN 'its lease expired ' || (j.recoveries + 1) || ' times without a recorded attempt'
                      ELSE j.last_error END,
    next_attempt_at = @now, lease_owner = NULL, lease_until = NULL, updated_at = @now
WHERE j.id IN (
    SELECT id FROM delivery_jobs
    WHERE state = 'in_flight' AND lease_until < @now
    ORDER BY lease_until
    LIMIT @batch
    FOR UPDATE SKIP LOCKED)
RETURNING j.state, j.subscription_id, j.ordering_key, j.tenant_id, j.event_seq
