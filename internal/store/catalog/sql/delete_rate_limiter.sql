DELETE FROM subscription_rates WHERE subscription_id = @id
