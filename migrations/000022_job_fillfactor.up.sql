-- Delivery jobs are written once and then updated once or twice within
-- moments (claimed, then succeeded). None of those updates can be HOT (the
-- state is in partial index predicates), but an update whose new version
-- fits on the old one's page is logged as a diff against it, and needs no
-- extra record locking the old version while a new page is found. With
-- pages filled to the brim by ingest, neither holds. Half-full pages leave
-- the room: about 5% less WAL per delivery (docs/benchmarks.md, "WAL per
-- delivery").
--
-- hubctl_create_partition takes the fill factor of the new partition
-- (NULL: the server's default), because a partition does not inherit its
-- parent's storage parameters and a partitioned table cannot hold them.
DROP FUNCTION hubctl_create_partition(text, text, text, text, text, text);

CREATE FUNCTION hubctl_create_partition(parent text, part text, catch_all text, key text, lo text, hi text, fillfactor integer)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF catch_all IS NOT NULL THEN
        EXECUTE format('LOCK TABLE %I IN ACCESS EXCLUSIVE MODE', parent);
    END IF;
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part, parent);
    IF fillfactor IS NOT NULL THEN
        EXECUTE format('ALTER TABLE %I SET (fillfactor = %s)', part, fillfactor);
    END IF;
    IF catch_all IS NOT NULL THEN
        EXECUTE format('WITH moved AS (DELETE FROM %I WHERE %I >= %L AND %I < %L RETURNING *) INSERT INTO %I SELECT * FROM moved',
            catch_all, key, lo, key, hi, part);
    END IF;
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%L)',
        parent, part, coalesce(quote_literal(lo), 'MINVALUE'), hi);
END
$$;

-- The partitions that exist already: new pages follow the setting.
DO $$
DECLARE
    p regclass;
BEGIN
    FOR p IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'delivery_jobs'::regclass LOOP
        EXECUTE format('ALTER TABLE %s SET (fillfactor = 50)', p);
    END LOOP;
END
$$;
