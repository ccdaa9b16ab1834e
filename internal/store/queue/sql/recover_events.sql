SELECT seq, id::text, event_key, type, source, coalesce(subject, ''), time, schema_version, schema_major,
       coalesce(datacontenttype, ''), CASE WHEN @payload THEN payload END
FROM events
WHERE seq >= @from AND seq < @hi AND tenant_id = @tenant
  AND received_at >= @since AND received_at < @until
  AND schema_major = @major AND (@origin = '' OR source = @origin)
  AND NOT (source = @operational_source AND subject = @subscription)
ORDER BY seq
LIMIT @batch
