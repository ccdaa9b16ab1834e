SELECT count(*) FROM quarantine_default WHERE received_at < @cutoff
