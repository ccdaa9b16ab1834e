SELECT event_seq, state, id FROM delivery_jobs
WHERE subscription_id = @subscription AND event_seq BETWEEN @first AND @last
