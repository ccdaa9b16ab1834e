DELETE FROM dead_letter_reports r USING subscriptions s
WHERE (r.subscription_id, r.reason) IN (
        SELECT subscription_id, reason FROM dead_letter_reports WHERE window_start <= @opened_before
        ORDER BY window_start LIMIT @limit FOR UPDATE SKIP LOCKED)
  AND s.id = r.subscription_id
RETURNING r.subscription_id, r.reason, r.tenant_id, s.name, r.window_start, r.dead, r.event_ids
