SELECT coalesce(
    (SELECT max(last_seq) < @min_retained FROM event_id_days WHERE day = @day),
    NOT EXISTS (SELECT 1 FROM event_ids WHERE id >= @lo AND id < @hi))
