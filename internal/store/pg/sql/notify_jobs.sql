SELECT pg_notify(@jobs_channel, '')
