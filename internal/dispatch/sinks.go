package dispatch

import (
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/store/catalog"
)

// sinkIdleTimeout is how long a cached sink nobody used is kept: long enough
// to span the gaps of a subscription's normal traffic, short enough that
// deleted subscriptions do not pile up.
const sinkIdleTimeout = 10 * time.Minute

// openedSink is one version of one subscription's sink, opened: its
// secrets decrypted.
type openedSink struct {
	sink      sink.Sink
	updatedAt time.Time
	// expires is when the version must be opened again although the row
	// did not change: the end of a rotation overlap drops the old secret
	// (docs/concepts.md, Secret rotation). Zero means never.
	expires  time.Time
	refs     int  // attempts using the sink now
	replaced bool // a newer version took its place; close when refs drop to 0
	lastUsed time.Time
}

// sinkCache keeps opened sinks per subscription, so a delivery costs no
// decryption and no connection set-up when its subscription has not
// changed. Reference counts make sure a sink replaced by a newer version is
// closed only once the attempts using it have finished.
type sinkCache struct {
	open func(catalog.Subscription) (sink.Sink, error)
	log  *slog.Logger

	mu      sync.Mutex
	entries map[uuid.UUID]*openedSink
}

func newSinkCache(open func(catalog.Subscription) (sink.Sink, error), log *slog.Logger) *sinkCache {
	return &sinkCache{open: open, log: log, entries: map[uuid.UUID]*openedSink{}}
}

// acquire returns the opened sink of sub's current version, opening it if
// needed; the caller hands it back with release.
func (c *sinkCache) acquire(sub catalog.Subscription, now time.Time) (*openedSink, error) {
	c.mu.Lock()
	if e := c.entries[sub.ID]; e != nil && e.current(sub, now) {
		e.refs++
		e.lastUsed = now
		c.mu.Unlock()
		return e, nil
	}
	c.mu.Unlock()

	// Opened outside the lock: a sink type may connect to its broker.
	s, err := c.open(sub)
	if err != nil {
		return nil, err
	}
	fresh := &openedSink{sink: s, updatedAt: sub.UpdatedAt, refs: 1, lastUsed: now}
	if sub.PreviousSecretExpiresAt != nil && now.Before(*sub.PreviousSecretExpiresAt) {
		fresh.expires = *sub.PreviousSecretExpiresAt
	}

	var toClose []sink.Sink
	c.mu.Lock()
	switch e := c.entries[sub.ID]; {
	case e != nil && e.current(sub, now):
		// Another attempt opened the same version meanwhile.
		e.refs++
		e.lastUsed = now
		c.mu.Unlock()
		closeSink(c.log, sub.ID, s)
		return e, nil
	case e != nil:
		e.replaced = true
		if e.refs == 0 {
			toClose = append(toClose, e.sink)
		}
	}
	c.entries[sub.ID] = fresh
	c.mu.Unlock()
	for _, old := range toClose {
		closeSink(c.log, sub.ID, old)
	}
	return fresh, nil
}

// current reports whether e is sub's version and still usable at now. A row
// read by an older claim (updated_at earlier) may use a newer sink: its
// subscription has changed since, and the newer version is the truth.
func (e *openedSink) current(sub catalog.Subscription, now time.Time) bool {
	return !e.updatedAt.Before(sub.UpdatedAt) && (e.expires.IsZero() || now.Before(e.expires))
}

func (c *sinkCache) release(e *openedSink, subID uuid.UUID) {
	c.mu.Lock()
	e.refs--
	closeNow := e.replaced && e.refs == 0
	c.mu.Unlock()
	if closeNow {
		closeSink(c.log, subID, e.sink)
	}
}

// EvictIdleCaches closes the sinks and forgets the subscriptions no claim
// used for sinkIdleTimeout.
func (d *Dispatcher) EvictIdleCaches(now time.Time) {
	d.sinks.evictIdle(now, sinkIdleTimeout)
	d.subs.evictIdle(now, sinkIdleTimeout)
}

// evictIdle closes sinks nobody used since before now - idle.
func (c *sinkCache) evictIdle(now time.Time, idle time.Duration) {
	c.evict(func(e *openedSink) bool { return now.Sub(e.lastUsed) >= idle })
}

// closeAll closes every cached sink; call it once no attempt is running.
func (c *sinkCache) closeAll() {
	c.evict(func(*openedSink) bool { return true })
}

// evict closes the unused sinks drop selects.
func (c *sinkCache) evict(drop func(*openedSink) bool) {
	closing := map[uuid.UUID]sink.Sink{}
	c.mu.Lock()
	for id, e := range c.entries {
		if e.refs > 0 || !drop(e) {
			continue
		}
		delete(c.entries, id)
		closing[id] = e.sink
	}
	c.mu.Unlock()
	for id, s := range closing {
		closeSink(c.log, id, s)
	}
}

func closeSink(log *slog.Logger, subID uuid.UUID, s sink.Sink) {
	if err := s.Close(); err != nil {
		log.Warn("closing a sink failed", "subscription_id", subID, "error", err)
	}
}
