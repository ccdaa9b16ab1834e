INSERT INTO dead_letter_reports (subscription_id, reason, tenant_id, window_start, dead, event_ids)
VALUES (@subscription_id, @reason, @tenant_id, @at, 0, '{}')
ON CONFLICT (subscription_id, reason) DO UPDATE
SET dead = dead_letter_reports.dead + @dead,
    event_ids = (dead_letter_reports.event_ids || @event_ids::uuid[])[1:@max_ids]
WHERE dead_letter_reports.window_start > @opened_after
RETURNING xmax = 0
