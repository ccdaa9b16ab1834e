SELECT coalesce(sum(pg_total_relation_size(relid)), 0), count(*) FILTER (WHERE isleaf)
FROM pg_partition_tree(@table::regclass)
