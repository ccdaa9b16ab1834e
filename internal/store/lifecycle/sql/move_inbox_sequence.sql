SELECT setval('events_seq_seq', @base, false)
