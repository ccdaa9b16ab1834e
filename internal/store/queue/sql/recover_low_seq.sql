SELECT seq, received_at FROM events WHERE seq < @lo ORDER BY seq DESC LIMIT 1
