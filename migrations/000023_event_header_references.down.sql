-- Put the referenced values back before the column that marks them goes.
-- The restoring runs in SQL, the same rules as internal/event's Stored.HeaderValue.
UPDATE events e SET header_values = (
    SELECT array_agg(CASE WHEN n <= 64 AND (e.header_derived >> (n::int - 1)) & 1 = 1 THEN
        convert_to(CASE
            WHEN k = 'content-type' OR k IN ('ce-datacontenttype', 'ce_datacontenttype') THEN e.datacontenttype
            WHEN k IN ('traceparent', 'ce-traceparent', 'ce_traceparent') THEN e.traceparent
            WHEN k IN ('tracestate', 'ce-tracestate', 'ce_tracestate') THEN e.tracestate
            WHEN k IN ('ce-specversion', 'ce_specversion') THEN '1.0'
            WHEN k IN ('ce-id', 'ce_id') THEN e.id::text
            WHEN k IN ('ce-source', 'ce_source') THEN e.source
            WHEN k IN ('ce-type', 'ce_type') THEN e.type
            WHEN k IN ('ce-time', 'ce_time') THEN
                rtrim(rtrim(to_char(e.time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '0'), '.') || 'Z'
            WHEN k IN ('ce-schemaversion', 'ce_schemaversion') THEN e.schema_version
            WHEN k IN ('ce-resourcetype', 'ce_resourcetype') THEN split_part(e.event_key, '.', 1)
            WHEN k IN ('ce-eventtype', 'ce_eventtype') THEN substr(e.event_key, length(split_part(e.event_key, '.', 1)) + 2)
            WHEN k IN ('ce-tenantid', 'ce_tenantid') THEN e.tenant_id
            WHEN k IN ('ce-subject', 'ce_subject') THEN e.subject
            WHEN k IN ('ce-dataschema', 'ce_dataschema') THEN e.dataschema
        END, 'UTF8')
        ELSE v END ORDER BY n)
    FROM unnest(e.header_keys, e.header_values) WITH ORDINALITY AS h (kb, v, n), lower(encode(h.kb, 'escape')) AS k)
WHERE e.header_derived IS NOT NULL AND e.header_derived <> 0;

ALTER TABLE events DROP COLUMN header_derived;
