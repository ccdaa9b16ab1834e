WITH u AS (
    SELECT * FROM unnest(@tenants::text[], @ids::uuid[], @seqs::bigint[], @days::date[]) AS u (tenant_id, id, seq, day)
), taken AS (
    INSERT INTO event_ids (tenant_id, id, seq)
    SELECT tenant_id, id, seq FROM u ORDER BY tenant_id, id
    ON CONFLICT (tenant_id, id) DO NOTHING
    RETURNING seq
), days AS (
    INSERT INTO event_id_days (day, slot, last_seq)
    SELECT u.day, @id_day_slot, max(u.seq) FROM u JOIN taken USING (seq) GROUP BY u.day ORDER BY u.day
    ON CONFLICT (day, slot) DO UPDATE SET last_seq = greatest(event_id_days.last_seq, excluded.last_seq)
)
SELECT seq FROM taken
