WITH old AS (
    SELECT r.subscription_id, r.reason, r.window_start, r.dead, r.event_ids FROM dead_letter_reports r
    WHERE r.subscription_id = @subscription_id AND r.reason = @reason
    FOR UPDATE
)
UPDATE dead_letter_reports r SET window_start = @at, dead = 0, event_ids = '{}'
FROM old
WHERE r.subscription_id = old.subscription_id AND r.reason = old.reason
RETURNING old.window_start, old.dead, old.event_ids
