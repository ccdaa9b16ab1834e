INSERT INTO pull_entries (subscription_id, event_seq)
SELECT * FROM unnest(@pull_subscriptions::uuid[], @pull_seqs::bigint[])
