DO $$
DECLARE
    p regclass;
BEGIN
    FOR p IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'delivery_jobs'::regclass LOOP
        EXECUTE format('ALTER TABLE %s RESET (fillfactor)', p);
    END LOOP;
END
$$;

DROP FUNCTION hubctl_create_partition(text, text, text, text, text, text, integer);

CREATE FUNCTION hubctl_create_partition(parent text, part text, catch_all text, key text, lo text, hi text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF catch_all IS NOT NULL THEN
        EXECUTE format('LOCK TABLE %I IN ACCESS EXCLUSIVE MODE', parent);
    END IF;
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part, parent);
    IF catch_all IS NOT NULL THEN
        EXECUTE format('WITH moved AS (DELETE FROM %I WHERE %I >= %L AND %I < %L RETURNING *) INSERT INTO %I SELECT * FROM moved',
            catch_all, key, lo, key, hi, part);
    END IF;
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%L)',
        parent, part, coalesce(quote_literal(lo), 'MINVALUE'), hi);
END
$$;
