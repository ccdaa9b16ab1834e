WITH shed AS (
    UPDATE delivery_jobs SET state = 'dead', dead_reason = 'subscription_disabled', dead_at = @finished, updated_at = @finished
    WHERE subscription_id = @subscription_id AND state = 'pending'
    RETURNING event_seq
)
SELECT count(*), coalesce((array_agg(event_seq ORDER BY event_seq))[1:@first_seqs], '{}') FROM shed
