INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, next_attempt_at, ordering_key)
SELECT id, @tenant_id, @subscription_id, seq, @now, key FROM unnest(@ids::uuid[], @new_seqs::bigint[], @new_keys::text[]) AS n (id, seq, key)
