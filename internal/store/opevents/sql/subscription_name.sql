SELECT name FROM subscriptions WHERE id = @subscription_id
