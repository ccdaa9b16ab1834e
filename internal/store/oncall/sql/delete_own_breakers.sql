DELETE FROM breaker_states WHERE owner = @owner
