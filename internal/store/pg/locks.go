package pg

// IngestLockKey is the transaction-level advisory lock every ingest batch
// holds, shared, from before it inserts events until it commits; what must
// see no batch in progress (moving the sequence to a new day, dropping a
// day of event ids, purging a tenant) takes it exclusively. Its value
// spells "hubctl" in ASCII; nothing else in the hub takes it.
const IngestLockKey int64 = 0x6875_6263_746c
