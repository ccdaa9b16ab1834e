SELECT (SELECT received_at FROM events ORDER BY seq LIMIT 1)
