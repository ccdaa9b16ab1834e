INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, ordering_key, state, dead_reason, dead_at, last_error)
SELECT id, tenant_id, subscription_id, event_seq, ordering_key, 'dead', @reason, coalesce(@dead_at, now()), last_error
FROM unnest(@ids::uuid[], @tenants::text[], @subs::uuid[], @seqs::bigint[], @keys::text[], @errs::text[])
    AS u (id, tenant_id, subscription_id, event_seq, ordering_key, last_error)
