package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.opentelemetry.io/otel/trace"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/kafkaclient"
	"github.com/hubctl/hubctl/internal/match"
	"github.com/hubctl/hubctl/internal/routing"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/internal/tracing"
)

const (
	// DefaultMaxBatchRecords bounds the records of one partition stored in
	// one transaction. Bigger batches are where throughput comes from,
	// but a rebalance waits for the batch in hand to be stored.
	DefaultMaxBatchRecords = 10_000
	// DefaultDrainTimeout bounds finishing the batch in hand at shutdown.
	DefaultDrainTimeout = 30 * time.Second
	// defaultRosterRefresh is STREAMING_HUB_ROSTER_REFRESH's default.
	defaultRosterRefresh = 5 * time.Second
	// fetchMaxPartitionBytes lets one fetch carry several thousand typical
	// events of a partition; franz-go's default of 1 MiB caps batches at
	// about a thousand 1 KiB events.
	fetchMaxPartitionBytes = 16 << 20
	// kgoDefaultMetadataMinAge is franz-go's default; MetadataMaxAge may
	// not be below it.
	kgoDefaultMetadataMinAge = 5 * time.Second
	// maxConcurrentBatches bounds the partitions of one poll handled at
	// once, each in a transaction of its own that commits independently
	// (queue.WriteIngestBatch). A partition's batch is mostly waiting on
	// PostgreSQL (round trips, the commit's flush); a few at once keep the
	// database's cores busy, more would only hold connections.
	maxConcurrentBatches = 4
	// rebalanceTimeout is how long the group waits for its members to
	// rejoin once a rebalance starts. A member that crashed never rejoins:
	// when its restart (a new dynamic member) joins, the group drops the
	// dead one after this long instead of waiting for its session to run
	// out, which under load is a full session timeout after the crash
	// because every offset commit counts as a heartbeat. A live member
	// rejoins as soon as the batch in hand is stored, well within it; one
	// stuck retrying a batch gives the batch up when a rebalance waits.
	rebalanceTimeout = 5 * time.Second
	// topUpAfter is how long a store must have taken for the next poll to
	// wait for the fetch sent behind it (topUpWaitFor), and
	// defaultTopUpWait the most it waits: about a fetch's round trip to a
	// nearby broker.
	topUpAfter       = time.Millisecond
	defaultTopUpWait = 2 * time.Millisecond
)

// Options configure a Consumer.
type Options struct {
	Kafka  config.KafkaConfig
	Ingest config.IngestConfig
	// Queue stores the batches and reads the stored offsets.
	Queue *queue.Store
	// Catalog reads the tenant roster and its changes.
	Catalog *catalog.Store
	// Logger receives structured logs; they name tenant, topic, partition,
	// offset and reason, never payloads or header values. Nil discards.
	Logger *slog.Logger
	// Registerer receives ingest's metrics; nil leaves them unregistered.
	Registerer prometheus.Registerer
	// Clock times batches; nil means time.Now.
	Clock func() time.Time
	// DrainTimeout bounds how long Run may keep storing and committing the
	// records in hand after its context ends; 0 means DefaultDrainTimeout.
	DrainTimeout time.Duration
	// MaxBatchRecords bounds one partition batch; 0 means
	// DefaultMaxBatchRecords.
	MaxBatchRecords int
	// Tracing receives a span per partition batch; nil is tracing off.
	Tracing *tracing.Tracing
	// LagInterval is how often consumer lag is measured; 0 means
	// DefaultLagInterval.
	LagInterval time.Duration
	// Handoff, when set, is this process's dispatcher: batches may lease
	// the first attempts of their jobs to it (queue.Handoff).
	Handoff queue.Handoff
}

// Consumer is ingest's Kafka consumer group member: it reads the subscribed
// topics and stores every record's verdict in the database, one transaction
// per partition per poll, committing to Kafka only what is stored.
type Consumer struct {
	opts        Options
	log         *slog.Logger
	clock       func() time.Time
	client      *kgo.Client
	metrics     *metrics
	roster      roster
	eventOpts   event.Options
	tracing     *tracing.Tracing
	verdicts    *verdictLog
	filterLog   *filterLogSampler // guarded by filterLogMu: batches report concurrently
	filterLogMu sync.Mutex
	// filterBudgets is each tenant's filter time; nil when unbounded.
	filterBudgets *match.TenantBudgets
	// route decides each batch's deliveries under the filter limits, in
	// the batch's transaction (queue.IngestBatch.Route).
	route     routing.Router
	owned     ownedPartitions
	recreated purgedTopics
	lagMu     sync.Mutex
	lagSeries map[[2]string]bool

	started atomic.Bool // Run was called; it never runs twice
	running atomic.Bool
	joined  atomic.Bool
	// nothingToJoin: no topic matches the pattern yet (topics.go).
	nothingToJoin atomic.Bool
	brokerProblem atomic.Pointer[kafkaclient.Problem]
	// rebalanceWaiting is signalled when the group wants to rebalance
	// while a poll is held; batches stuck retrying then give up their
	// records instead of holding the group until it evicts this member.
	rebalanceWaiting chan struct{}
	closeOnce        sync.Once
	// clientSet is closed once client is assigned: franz-go may call back
	// into the consumer from its own goroutines as soon as it starts.
	clientSet chan struct{}
	// fenced is closed when another process took this static member's
	// place (fencing.go).
	fenced     chan struct{}
	fencedFlag atomic.Bool
	fenceOnce  sync.Once

	// commit sends stored offsets to Kafka. Tests replace it to simulate a
	// crash between the database commit and the Kafka commit.
	commit func(ctx context.Context, offsets map[string]map[int32]kgo.EpochOffset) error
	// topUpWait bounds topUp's wait; tests lengthen it.
	topUpWait time.Duration
}

// New builds a consumer from the configuration. It creates the Kafka client,
// which starts joining the group in the background; nothing is read before
// Run.
func New(opts Options) (*Consumer, error) {
	if opts.Queue == nil || opts.Catalog == nil {
		return nil, errors.New("ingest: no queue or catalog statements")
	}
	if len(opts.Kafka.Brokers) == 0 {
		return nil, errors.New("ingest: no Kafka brokers configured (STREAMING_HUB_KAFKA_BROKERS)")
	}
	if opts.Kafka.Group == "" {
		return nil, errors.New("ingest: no consumer group configured (STREAMING_HUB_KAFKA_GROUP)")
	}
	if opts.Kafka.Topics == nil {
		return nil, errors.New("ingest: no topic pattern configured (STREAMING_HUB_KAFKA_TOPICS)")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = DefaultDrainTimeout
	}
	if opts.MaxBatchRecords <= 0 {
		opts.MaxBatchRecords = DefaultMaxBatchRecords
	}
	if opts.Ingest.RosterRefresh <= 0 {
		opts.Ingest.RosterRefresh = defaultRosterRefresh
	}
	if opts.LagInterval <= 0 {
		opts.LagInterval = DefaultLagInterval
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("ingest: register metrics: %w", err)
	}
	log := opts.Logger.With(slog.String("component", "ingest"))
	c := &Consumer{
		opts:      opts,
		log:       log,
		clock:     opts.Clock,
		metrics:   m,
		tracing:   opts.Tracing,
		verdicts:  newVerdictLog(log),
		filterLog: newFilterLogSampler(filterLogWindow),
		lagSeries: make(map[[2]string]bool),
		eventOpts: event.Options{TypePrefix: opts.Ingest.TypePrefix, MaxEventBytes: opts.Ingest.MaxEventBytes,
			MaxHeaderCount: opts.Ingest.MaxHeaderCount, MaxHeaderBytes: opts.Ingest.MaxHeaderBytes, MaxAttributeBytes: opts.Ingest.MaxAttributeBytes},
		rebalanceWaiting: make(chan struct{}, 1),
		clientSet:        make(chan struct{}),
		fenced:           make(chan struct{}),
	}
	c.commit = c.commitToKafka
	c.topUpWait = defaultTopUpWait
	if opts.Ingest.FilterTenantBudget > 0 {
		c.filterBudgets = match.NewTenantBudgets(opts.Ingest.FilterTenantBudget, opts.Clock)
	}
	c.route = match.Router(match.FilterLimits{EvalTimeout: opts.Ingest.FilterEvalTimeout, Budgets: c.filterBudgets, Now: c.clock})
	kopts, err := c.clientOptions()
	if err != nil {
		return nil, err
	}
	if c.client, err = kgo.NewClient(kopts...); err != nil {
		return nil, fmt.Errorf("ingest: Kafka client: %w", err)
	}
	close(c.clientSet)
	return c, nil
}

func (c *Consumer) clientOptions() ([]kgo.Opt, error) {
	k := c.opts.Kafka
	opts, err := kafkaclient.Options(context.Background(), k, "hubctl")
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	opts = append(opts,
		kgo.WithLogger(kgoLogger{log: c.log, fenced: c.markFenced}),
		kgo.ConsumerGroup(k.Group),
		kgo.WithHooks(groupErrors{c}),
		// Topics are chosen by pattern, so topics created later are
		// picked up at the next metadata refresh (docs/concepts.md, Events).
		kgo.ConsumeRegex(),
		kgo.ConsumeTopics(k.Topics.String()),
		kgo.MetadataMaxAge(k.MetadataRefresh),
		// A partition assigned while a fetch is already waiting on the
		// others (a topic created after start) is read only once that
		// fetch returns: with franz-go's default 5s wait, a new topic's
		// first events came up to 5s after the metadata refresh found it.
		// An idle consumer pays one more fetch request per broker a second.
		kgo.FetchMaxWait(time.Second),
		// Records of aborted producer transactions never become events.
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxPartitionBytes(fetchMaxPartitionBytes),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.AdjustFetchOffsetsFn(c.adjustStartOffsets),
		kgo.OnPartitionsAssigned(c.onAssigned),
		kgo.OnPartitionsRevoked(c.onRevoked),
		kgo.OnPartitionsLost(c.onLost),
		kgo.OnPartitionsCallbackBlocked(c.onRebalanceBlocked),
	)
	// The session timeout bounds how long a crashed dynamic member holds
	// its partitions; a static member's restart does not wait for it.
	if k.SessionTimeout > 0 {
		opts = append(opts, kgo.SessionTimeout(k.SessionTimeout))
	}
	opts = append(opts, kgo.RebalanceTimeout(rebalanceTimeout))
	if k.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(k.InstanceID))
	}
	if k.MetadataRefresh < kgoDefaultMetadataMinAge {
		opts = append(opts, kgo.MetadataMinAge(k.MetadataRefresh))
	}
	// The client never subscribes to an excluded topic: nothing of it is
	// fetched, judged or committed.
	if k.TopicsExclude != nil {
		opts = append(opts, kgo.ConsumeExcludeTopics(k.TopicsExclude.String()))
	}
	return opts, nil
}

// Ready reports whether Run is consuming and the client has joined its
// group, or the brokers answer that no topic matches the pattern yet, and
// it has not been fenced; /readyz uses it.
func (c *Consumer) Ready() bool {
	return c.running.Load() && (c.joined.Load() || c.nothingToJoin.Load()) && !c.fencedFlag.Load()
}

// Close leaves the group and releases the Kafka client. Run does this itself
// when it returns; Close is for a consumer whose Run was never called. It may
// be called more than once.
func (c *Consumer) Close() {
	c.closeOnce.Do(func() {
		c.joined.Store(false)
		c.client.CloseAllowingRebalance()
	})
}

// Run consumes until ctx ends, then stores and commits the records in hand
// (within DrainTimeout), leaves the group and returns nil (docs/concepts.md, Shutdown). It
// returns an error only when called twice.
func (c *Consumer) Run(ctx context.Context) error {
	if !c.started.CompareAndSwap(false, true) {
		return errors.New("ingest: Run called more than once")
	}
	defer c.Close()

	work, stopWork := drainContext(ctx, c.opts.DrainTimeout)
	defer stopWork()

	if err := c.loadRoster(ctx); err != nil {
		return nil // stopped before the database answered: nothing was read
	}
	c.running.Store(true)
	defer c.running.Store(false)
	var refresher sync.WaitGroup
	refreshCtx, stopRefresh := context.WithCancel(ctx)
	refresher.Go(func() { c.refreshRoster(refreshCtx, c.opts.Ingest.RosterRefresh) })
	refresher.Go(func() { c.measureLag(refreshCtx, c.opts.LagInterval) })
	refresher.Go(func() { c.watchBrokers(refreshCtx, c.opts.Kafka.MetadataRefresh) })
	refresher.Go(func() { c.flushVerdictLog(refreshCtx) })
	refresher.Go(func() { c.watchRoster(refreshCtx) })
	defer refresher.Wait()
	defer stopRefresh()

	c.log.Info("ingest started", slog.String("group", c.opts.Kafka.Group), slog.String("topics", c.opts.Kafka.Topics.String()),
		slog.String("instance_id", c.opts.Kafka.InstanceID))
	pollCtx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	go func() {
		select {
		case <-c.fenced:
			stopPoll()
		case <-pollCtx.Done():
		}
	}()
	var lastStore time.Duration
	for {
		// The whole buffered fetch, every partition of it: a partition's
		// records are then stored beside the others' instead of after
		// them (a bounded poll takes one partition's records first).
		polled := c.clock()
		fetches := c.client.PollFetches(pollCtx)
		if wait, ok := topUpWaitFor(c.clock().Sub(polled), lastStore, c.topUpWait); ok &&
			fetches.NumRecords() > 0 && !c.Fenced() && !fetches.IsClientClosed() {
			fetches = append(fetches, c.topUp(pollCtx, wait)...)
		}
		if c.Fenced() {
			// Whatever this poll read belongs to the member that
			// replaced us; nothing of it was stored or committed.
			c.Close()
			<-ctx.Done()
			return nil
		}
		if fetches.IsClientClosed() {
			return nil
		}
		c.logFetchErrors(fetches)
		c.followDataLoss(work, fetches)
		lastStore = 0
		if parts := splitByPartition(fetches); len(parts) > 0 {
			began := c.clock()
			c.handlePoll(ctx, work, parts)
			lastStore = c.clock().Sub(began)
		}
		c.client.AllowRebalance()
		c.followRecreatedTopics(fetches)
		select {
		case <-c.rebalanceWaiting: // that rebalance has just been allowed
		default:
		}
		if ctx.Err() != nil {
			c.log.Info("ingest stopped")
			return nil
		}
	}
}

// topUp takes the fetch the client sent when the last poll emptied its
// buffer, if it answers within wait. The client keeps one fetch per
// broker, sent as soon as the previous one is polled: while a poll is
// being stored, the fetch buffered behind it holds only what had arrived
// when that poll began, and what arrived during the store waits in the
// broker for the next round. Without this, an event produced while a
// batch is stored waits about two stores before its own; with it, one.
// It runs only when the poll found its fetch already buffered after a
// store: a poll that waited for records has the newest there are.
func (c *Consumer) topUp(ctx context.Context, wait time.Duration) kgo.Fetches {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	return c.client.PollFetches(ctx)
}

// topUpWaitFor decides whether a poll that took polled, after a store that
// took stored, waits for the fetch sent behind it (topUp), and how long:
// only when the poll found its fetch already buffered (it did not wait
// for records) after a store long enough for more to have arrived, and
// then at most limit and half the store, so a store's wait in vain never
// adds more than half of what it saves when it finds records.
func topUpWaitFor(polled, stored, limit time.Duration) (time.Duration, bool) {
	if polled >= topUpAfter || stored < topUpAfter {
		return 0, false
	}
	return min(limit, stored/2), true
}

// handlePoll stores each partition's records in its own transaction, then
// commits to Kafka the offsets of the partitions that were stored.
//
// Rebalances wait while this runs (BlockRebalanceOnPoll), so every partition
// handled here is still owned when its offset is committed, and
// OnPartitionsRevoked never runs with a record between read and stored. A
// member evicted anyway (held past the rebalance timeout) has its commit
// refused by the group, and its late database write is harmless: the stored
// offset lets only one writer store each record.
func (c *Consumer) handlePoll(ctx, work context.Context, parts []partitionRecords) {
	// Retries of a batch the database refuses stop at shutdown, or when
	// the group wants to rebalance: the member must not hold the group
	// until it is evicted.
	giveUp := make(chan struct{})
	handled := make(chan struct{})
	defer close(handled)
	go func() {
		select {
		case <-c.rebalanceWaiting:
		case <-ctx.Done():
		case <-handled:
			return
		}
		close(giveUp)
	}()

	outcomes := make([]partitionOutcome, len(parts))
	slots := make(chan struct{}, maxConcurrentBatches)
	var wg sync.WaitGroup
	for i, p := range parts {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			outcomes[i] = c.handlePartition(ctx, work, giveUp, p)
		})
	}
	wg.Wait()

	stored := make(map[string]map[int32]kgo.EpochOffset, len(parts))
	for i, p := range parts {
		o := outcomes[i]
		for _, b := range o.stored {
			c.report(b.batch, b.result)
		}
		if o.otherIncarnation {
			// Read from a topic since deleted and created again:
			// neither stored nor committed, and not read again, as
			// that log is gone. The client stops reading it at the
			// next fetch (followRecreatedTopics).
			c.log.Debug("dropped records of an earlier incarnation of the topic", slog.String("topic", p.topic),
				slog.Int("partition", int(p.partition)), slog.Int("records", len(p.records)))
			continue
		}
		if len(o.stored) == 0 {
			// Not stored, so not committed either. The client has
			// already fetched past these records: move it back so that
			// whoever owns the partition next reads them again.
			c.rewind(p.topic, p.partition, p.records[0].Offset)
			continue
		}
		last := o.stored[len(o.stored)-1]
		next := kgo.EpochOffset{Epoch: p.records[len(p.records)-1].LeaderEpoch, Offset: last.result.NextOffset}
		if !o.complete || last.result.NextOffset > last.batch.NextOffset {
			// The client's position is not after this poll: the rest of
			// the partition's records were not stored and are read again
			// from the first of them, or an earlier writer stored records
			// beyond this poll and they are skipped.
			next.Epoch = -1
			c.rewind(p.topic, p.partition, next.Offset)
		}
		if stored[p.topic] == nil {
			stored[p.topic] = make(map[int32]kgo.EpochOffset)
		}
		stored[p.topic][p.partition] = next
	}
	if len(stored) == 0 {
		return
	}
	if err := c.commit(work, stored); err != nil {
		if isFenced(err) {
			c.markFenced()
			return
		}
		// The stored offsets still make a restart resume correctly; the
		// next successful commit catches Kafka up.
		c.metrics.commitFailures.Inc()
		c.log.Warn("Kafka offset commit failed after the batch was stored", slog.Any("error", err))
	}
}

// partitionOutcome is what became of one partition's records in a poll:
// the batches stored, in offset order, and whether that was all of them.
type partitionOutcome struct {
	stored   []batchOutcome
	complete bool
	// otherIncarnation: the stored position belongs to another
	// incarnation of the topic than the records (queue.IngestResult).
	otherIncarnation bool
}

// handlePartition stores one partition's records of a poll in batches of
// at most MaxBatchRecords, one after the other: each batch's transaction
// starts from the offset the one before it stored. Once a rebalance waits,
// it starts no further batch, so the group waits for one batch at most.
func (c *Consumer) handlePartition(ctx, work context.Context, giveUp <-chan struct{}, p partitionRecords) partitionOutcome {
	var out partitionOutcome
	for records := range slices.Chunk(p.records, c.opts.MaxBatchRecords) {
		if len(out.stored) > 0 {
			select {
			case <-giveUp:
				return out
			default:
			}
		}
		o := c.handleBatch(ctx, work, giveUp, partitionRecords{topic: p.topic, topicID: p.topicID, partition: p.partition, records: records})
		if o.result.OtherIncarnation {
			out.otherIncarnation = true
			return out
		}
		if !o.stored {
			return out
		}
		out.stored = append(out.stored, o)
	}
	out.complete = true
	return out
}

// handleBatch decides and stores one partition's records, in a span of its
// own when tracing is on.
func (c *Consumer) handleBatch(ctx, work context.Context, giveUp <-chan struct{}, p partitionRecords) batchOutcome {
	batch := decideBatch(c.opts.Kafka.Group, p, c.eventOpts, c.roster.status)
	batch.Handoff = c.opts.Handoff
	batch.Route = c.route
	if c.tracing == nil {
		res, ok := c.storeBatch(ctx, work, giveUp, &batch)
		return batchOutcome{batch: batch, result: res, stored: ok}
	}
	_, span := c.tracing.StartIngestBatch(work, tracing.Batch{
		Topic: p.topic, Partition: p.partition, Records: len(p.records), Links: batchLinks(batch),
	})
	res, ok := c.storeBatch(ctx, work, giveUp, &batch)
	var accepted, discarded, quarantined int
	for _, n := range res.Counts() {
		switch n.Kind {
		case event.Accept:
			accepted += n.Count
		case event.Discard:
			discarded += n.Count
		case event.Quarantine:
			quarantined += n.Count
		}
	}
	var err error
	if !ok {
		err = errors.New("batch not stored: given up for shutdown or a rebalance")
	}
	tracing.EndIngestBatch(span, accepted, discarded, quarantined, err)
	return batchOutcome{batch: batch, result: res, stored: ok}
}

// batchLinks are the trace contexts of a batch's accepted records, at most
// tracing.MaxBatchLinks of them.
func batchLinks(batch queue.IngestBatch) []trace.Link {
	var links []trace.Link
	for i := range batch.Records {
		ev := &batch.Records[i].Event
		if ev.TraceParent == "" {
			continue
		}
		if l, ok := tracing.Link(ev.TraceParent, ev.TraceState); ok {
			links = append(links, l)
			if len(links) == tracing.MaxBatchLinks {
				break
			}
		}
	}
	return links
}

// batchOutcome is what became of one partition's batch.
type batchOutcome struct {
	batch  queue.IngestBatch
	result queue.IngestResult
	stored bool
}

// storeBatch writes one partition batch, retrying for as long as the
// database refuses it. It gives up, reporting false, only once giveUp is
// closed (shutdown or a rebalance waiting): the records are then read again,
// by this member after a restart or by the partition's next owner.
func (c *Consumer) storeBatch(ctx, work context.Context, giveUp <-chan struct{}, batch *queue.IngestBatch) (queue.IngestResult, bool) {
	log := c.log.With(slog.String("topic", batch.Topic), slog.Int("partition", int(batch.Partition)),
		slog.Int64("first_offset", batch.Records[0].Offset), slog.Int("records", len(batch.Records)))
	start := c.clock()
	for attempt := 0; ; attempt++ {
		attemptCtx, cancel := context.WithTimeout(work, attemptTimeout)
		res, err := c.confirmAndWrite(attemptCtx, batch)
		cancel()
		if err == nil {
			stored := c.clock()
			c.metrics.batchSeconds.Observe(stored.Sub(start).Seconds())
			c.metrics.batchesStored.Inc()
			c.metrics.lastStored.Set(float64(stored.UnixNano()) / 1e9)
			c.metrics.batchRecords.Observe(float64(len(batch.Records)))
			if attempt > 0 {
				log.Info("batch stored after retrying", slog.Int("attempts", attempt+1))
			}
			return res, true
		}
		c.metrics.storeRetries.Inc()
		if attempt == 0 {
			log.Warn("storing batch failed; retrying until it succeeds",
				slog.Bool("database_unavailable", pg.IsUnavailable(err)), slog.Any("error", err))
		}
		select {
		case <-giveUp:
			c.metrics.abandoned.Inc()
			if ctx.Err() != nil {
				log.Warn("shutting down with the batch not stored; it is read again after the restart")
			} else {
				log.Warn("giving up the batch for a rebalance; it is read again by the partition's owner")
			}
			return queue.IngestResult{}, false
		case <-time.After(retryBackoff.Delay(attempt, rand.Float64())):
		}
	}
}

// confirmAndWrite asks the database about the tenants the cached roster
// turned away (see doubtfulTenants), applies its answer to the batch and to
// the cache, then writes the batch.
func (c *Consumer) confirmAndWrite(ctx context.Context, batch *queue.IngestBatch) (queue.IngestResult, error) {
	if ids := doubtfulTenants(*batch); len(ids) > 0 {
		statuses, err := c.opts.Catalog.TenantStatuses(ctx, ids)
		if err != nil {
			return queue.IngestResult{}, err
		}
		readmit(batch, statuses)
		c.roster.update(ids, statuses)
	}
	return c.opts.Queue.WriteIngestBatch(ctx, *batch)
}

// logFilterFailures logs a subscription's failing content filter at most
// once a minute, with how many events it failed on since its last line.
// The error is CEL's, which names fields and functions, never values of
// the payload.
func (c *Consumer) logFilterFailures(failures []match.FilterFailure) {
	if len(failures) == 0 {
		return
	}
	c.filterLogMu.Lock()
	lines := c.filterLog.note(failures, c.clock())
	c.filterLogMu.Unlock()
	for _, l := range lines {
		f := l.failure
		c.log.Warn("content filter failed; a push subscription keeps each such event as a filter_error dead letter",
			slog.String("tenant", f.TenantID), slog.String("subscription_id", uuid.UUID(f.SubscriptionID).String()),
			slog.String("reason", f.Reason), slog.String("error", f.Error), slog.Bool("pull", f.Pull), slog.Int("count", l.count))
	}
}

// rewind points the client at a partition's offset: back at its first
// record not stored, so nothing fetched but not stored is skipped, or past
// records an earlier writer stored.
func (c *Consumer) rewind(topic string, partition int32, offset int64) {
	c.client.SetOffsets(map[string]map[int32]kgo.EpochOffset{
		topic: {partition: {Epoch: -1, Offset: offset}},
	})
}

// report counts a stored batch and logs its quarantined and discarded
// records, one line per (verdict, reason, tenant) a minute at most, with a
// count (verdictLog).
func (c *Consumer) report(batch queue.IngestBatch, res queue.IngestResult) {
	c.metrics.observe(res)
	c.logFilterFailures(res.FilterFailures)
	if res.Skipped > 0 {
		c.log.Info("skipped records an earlier writer had stored", slog.String("topic", batch.Topic),
			slog.Int("partition", int(batch.Partition)), slog.Int("records", res.Skipped))
	}
	now := c.clock()
	for i, v := range res.Verdicts {
		if v.Kind == event.Accept {
			continue
		}
		r := &batch.Records[res.Skipped+i]
		// A quarantined record's tenantid did not pass the rules, so it is
		// not repeated; the event of a discarded one did.
		c.verdicts.record(verdictKey{kind: v.Kind, reason: v.Reason, tenant: r.Event.TenantID}, batch.Topic, batch.Partition, r.Offset, now)
	}
}

// flushVerdictLog logs the counts of discarded and quarantined records as
// their windows end, until ctx ends.
func (c *Consumer) flushVerdictLog(ctx context.Context) {
	ticker := time.NewTicker(verdictLogWindow / 12)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			c.verdicts.flush(c.clock().Add(verdictLogWindow))
			return
		case <-ticker.C:
			c.verdicts.flush(c.clock())
		}
	}
}

// commitToKafka commits offsets synchronously and returns the first error,
// of the request or of any partition.
func (c *Consumer) commitToKafka(ctx context.Context, offsets map[string]map[int32]kgo.EpochOffset) error {
	var errs []error
	c.client.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					errs = append(errs, fmt.Errorf("%s/%d: %w", t.Topic, p.Partition, err))
				}
			}
		}
	})
	return errors.Join(errs...)
}

func (c *Consumer) logFetchErrors(fetches kgo.Fetches) {
	fetches.EachError(func(topic string, partition int32, err error) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, kgo.ErrClientClosed) || isFenced(err) {
			return
		}
		// A recreated topic (followRecreatedTopics) and lost records
		// (followDataLoss) are handled, and said, where they are.
		var loss *kgo.ErrDataLoss
		if errors.Is(err, kerr.UnknownTopicID) || errors.As(err, &loss) {
			return
		}
		c.log.Warn("Kafka fetch failed", slog.String("topic", topic), slog.Int("partition", int(partition)), slog.Any("error", err))
	})
}

func (c *Consumer) onAssigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	c.joined.Store(true)
	c.owned.add(assigned)
	c.recreated.assigned(assigned)
	if len(assigned) > 0 {
		c.log.Info("partitions assigned", slog.Any("partitions", assigned))
	}
}

// onRevoked has nothing to flush: with BlockRebalanceOnPoll it runs between
// polls, when every stored batch has been committed and nothing unstored
// has been committed.
func (c *Consumer) onRevoked(_ context.Context, _ *kgo.Client, revoked map[string][]int32) {
	c.owned.remove(revoked)
	if len(revoked) > 0 {
		c.log.Info("partitions revoked", slog.Any("partitions", revoked))
	}
}

// onLost is the same as a revoke, except that the group has already moved
// on; a commit now would be refused, and the stored offsets are what the
// partitions' next owners resume from.
func (c *Consumer) onLost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	c.joined.Store(false)
	c.owned.remove(lost)
	if c.Fenced() {
		return // said once, by markFenced
	}
	c.log.Warn("partitions lost; rejoining the group", slog.Any("partitions", lost))
}

func (c *Consumer) onRebalanceBlocked(context.Context, *kgo.Client) {
	select {
	case c.rebalanceWaiting <- struct{}{}:
	default:
	}
}

// drainContext returns a context that ends grace after parent does (or when
// the returned cancel is called): work in hand when the process is told to
// stop may finish, but not forever.
func drainContext(parent context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	var timer atomic.Pointer[time.Timer]
	stop := context.AfterFunc(parent, func() { timer.Store(time.AfterFunc(grace, cancel)) })
	return ctx, func() {
		stop()
		if t := timer.Load(); t != nil {
			t.Stop()
		}
		cancel()
	}
}
