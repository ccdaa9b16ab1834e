DELETE FROM quarantine_default WHERE received_at < @cutoff
