DELETE FROM quarantine q WHERE EXISTS (
    SELECT 1 FROM unnest(q.header_keys, q.header_values) AS h (k, v)
    WHERE lower(encode(h.k, 'escape')) IN ('ce-tenantid', 'ce_tenantid') AND h.v = convert_to(@tenant_id, 'UTF8'))
