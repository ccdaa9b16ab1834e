-- Bit i set: the value of the event's header i is the one its attribute
-- columns determine, and header_values holds NULL in its place
-- (internal/event, Stored). NULL: every header value is a copy, as in the
-- rows written before this column.
ALTER TABLE events ADD COLUMN header_derived bigint;
