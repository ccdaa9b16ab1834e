-- Statements on a partition named at run time, done server-side so that the
-- hub binds every value as a parameter: partition bounds cannot be bound in
-- DDL, so they are quoted here with format's %L, and identifiers with %I.

-- hubctl_create_partition adds to parent the partition part for keys from
-- lo up to hi (as the key's text; lo NULL for MINVALUE). It is created on
-- its own and then attached: for a table without a default partition
-- (catch_all NULL) attaching takes a lock that ingest and dispatch never
-- wait for, where CREATE TABLE ... PARTITION OF would lock the parent
-- exclusively. With a default partition the parent is locked exclusively
-- first, and the rows the default holds for the range move into the new
-- partition, so that no statement sees that move half done. The caller's
-- transaction bounds the lock waits (lock_timeout).
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

-- hubctl_count_rows counts the rows of one table or partition.
CREATE FUNCTION hubctl_count_rows(tbl text) RETURNS bigint LANGUAGE plpgsql STABLE AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM %I', tbl) INTO n;
    RETURN n;
END
$$;

-- hubctl_has_rows says whether one table or partition holds any row.
CREATE FUNCTION hubctl_has_rows(tbl text) RETURNS boolean LANGUAGE plpgsql STABLE AS $$
DECLARE
    found boolean;
BEGIN
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I)', tbl) INTO found;
    RETURN found;
END
$$;

-- hubctl_has_rows_in_state says whether one partition of a table with a
-- state column holds a row in that state: named, the partition is probed
-- through its partial index for the state alone, where a query of the
-- parent within the partition's bounds may be planned as a scan of the
-- partition's whole key range.
CREATE FUNCTION hubctl_has_rows_in_state(tbl text, state text) RETURNS boolean LANGUAGE plpgsql STABLE AS $$
DECLARE
    found boolean;
BEGIN
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE state = %L)', tbl, state) INTO found;
    RETURN found;
END
$$;

-- hubctl_has_rows_after says whether one table or partition holds a row
-- whose column col is after a moment.
CREATE FUNCTION hubctl_has_rows_after(tbl text, col text, after timestamptz) RETURNS boolean LANGUAGE plpgsql STABLE AS $$
DECLARE
    found boolean;
BEGIN
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE %I > $1)', tbl, col) USING after INTO found;
    RETURN found;
END
$$;
