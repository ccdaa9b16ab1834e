UPDATE subscriptions SET span_reported = true WHERE id = @subscription_id
