SELECT (SELECT received_at FROM events WHERE seq >= @lo AND seq < @hi ORDER BY seq DESC LIMIT 1)
