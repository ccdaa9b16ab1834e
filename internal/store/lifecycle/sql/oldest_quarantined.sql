SELECT min(received_at) FROM quarantine
