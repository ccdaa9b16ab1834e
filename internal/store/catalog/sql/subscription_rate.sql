SELECT s.rate_limit, r.tat, r.busy_since
FROM subscription_rates r JOIN subscriptions s ON s.id = r.subscription_id
WHERE r.subscription_id = @id AND s.rate_limit IS NOT NULL
