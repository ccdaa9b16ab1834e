SELECT pg_notify(@purge_channel, @payload)
