DELETE FROM event_id_days WHERE day = @day
