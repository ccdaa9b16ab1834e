INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, ordering_key)
SELECT * FROM unnest(@ids::uuid[], @tenants::text[], @subs::uuid[], @seqs::bigint[], @keys::text[])
