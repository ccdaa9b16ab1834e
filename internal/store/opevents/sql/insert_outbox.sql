INSERT INTO operational_outbox (seq, tenant_id, id, event_key, type, subject, time, payload)
SELECT * FROM unnest(@seqs::bigint[], @tenants::text[], @ids::uuid[], @keys::text[], @types::text[], @subjects::text[],
                     @times::timestamptz[], @payloads::bytea[])
