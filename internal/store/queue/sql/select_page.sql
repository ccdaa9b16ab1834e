SELECT * FROM (
    SELECT e.seq, e.id::text, e.event_key, e.type, e.source, e.tenant_id, e.schema_version,
           coalesce(e.subject, ''), coalesce(e.datacontenttype, ''), e.time, e.received_at, e.payload
    FROM pull_entries p
    JOIN events e ON e.seq = p.event_seq
    WHERE p.subscription_id = @subscription_id
      AND p.event_seq > coalesce(@after::bigint, (SELECT cursor_seq FROM pull_cursors WHERE subscription_id = @subscription_id))
    ORDER BY p.event_seq
    LIMIT @limit) page
WHERE page.seq < current_setting('hubctl.ingest_horizon')::bigint
ORDER BY page.seq
