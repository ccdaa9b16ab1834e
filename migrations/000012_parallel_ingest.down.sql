DROP FUNCTION ingest_horizon();
ALTER TABLE event_id_days DROP CONSTRAINT event_id_days_pkey;
DELETE FROM event_id_days a USING event_id_days b
WHERE a.day = b.day AND (a.last_seq, a.slot) < (b.last_seq, b.slot);
ALTER TABLE event_id_days DROP COLUMN slot;
ALTER TABLE event_id_days ADD PRIMARY KEY (day);
