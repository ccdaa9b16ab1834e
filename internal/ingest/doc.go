// Package ingest is the first stage of the hub (docs/concepts.md, Events): a Kafka consumer
// group member that gives every record on the subscribed topics exactly one
// verdict and stores the outcome in PostgreSQL, consume-once.
//
// A poll takes the whole buffered fetch. Each partition's records are judged
// (event.Parse for rules 1–4, the cached tenant roster for rules 5–6) and
// written by queue.WriteIngestBatch in batches of at most MaxBatchRecords
// (10,000), one transaction each, in offset order: new events into the inbox
// (rule 7 is its ON CONFLICT), quarantined records, the delivery jobs and
// pull entries matching creates, and the partition's next offset after the
// batch. Only then is the partition's offset committed to Kafka. A poll's
// share of a partition is bounded in records only by this split, so the
// batch, not the poll, is the transaction: a rebalance waits for one batch,
// not for a 16 MiB fetch.
//
// Decisions worth knowing:
//
//   - Topics are subscribed by regex (STREAMING_HUB_KAFKA_TOPICS) with
//     franz-go's exclude list (STREAMING_HUB_KAFKA_TOPICS_EXCLUDE), so an
//     excluded topic is never fetched, judged or committed.
//   - The stored offset, not Kafka's, is the truth: on assignment a partition
//     resumes from the stored offset when it is ahead of Kafka's committed
//     one, and the batch write skips records below it. A record is therefore
//     stored once even when a Kafka commit was lost or two members briefly
//     both held a partition. A stored offset applies only to the
//     incarnation of the topic (its Kafka topic id) it was written for: a
//     topic deleted and created again is read from its start, and one whose
//     broker lost the log's tail from the log end; the stored offset is
//     rewritten first, and a running consumer purges a topic whose id Kafka
//     no longer knows so that the pattern finds the new one (offsets.go).
//   - Rebalances wait while a poll is being stored (BlockRebalanceOnPoll),
//     but only for the batch in hand: once the group wants to rebalance, a
//     partition starts no further batch, commits what it stored and is
//     rewound to the rest. A write the database refuses is retried with
//     backoff, holding the poll, until it succeeds; it is given up (and the
//     client rewound to the first unstored record) only at shutdown or when
//     the group wants to rebalance. Nothing unstored is ever committed to
//     Kafka.
//   - The partitions of a poll are handled up to four at a time (a bounded
//     poll, PollRecords, hands over one partition's records first, which
//     made ingest serial), each batch its own transaction committing on its
//     own (the store's
//     horizon keeps pull readers from skipping a batch that commits after
//     one with higher seqs). A stuck partition does not block the commit
//     of the others.
//   - A poll that finds its fetch already buffered after a store also
//     takes the fetch the client sent behind it, waiting briefly
//     (topUpWaitFor): the buffered one holds only what had arrived when
//     the store began, and without it what arrived during the store would
//     wait one more store.
//   - Crash recovery is bounded (docs/reliability.md): with
//     STREAMING_HUB_KAFKA_INSTANCE_ID the member is static and its restart
//     takes its partitions back without a rebalance; a rebalance waits at
//     most 5s for members to rejoin, so a dynamic member's restart is not
//     held for the dead one's session (STREAMING_HUB_KAFKA_SESSION_TIMEOUT).
//     A static member fenced by another process with its id stops for good,
//     logs it once and is no longer Ready (fencing.go).
//   - The roster is loaded before the first record is judged and reloaded
//     every STREAMING_HUB_ROSTER_REFRESH; a failed reload keeps the last one.
//   - Logs name topic, partition, offset, reason and tenant, never payloads
//     or header values (quarantine details quote header values, so they go
//     to the database only).
package ingest
