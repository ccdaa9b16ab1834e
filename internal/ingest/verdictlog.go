package ingest

import (
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/hubctl/hubctl/internal/event"
)

// verdictLogWindow is how often at most one line is logged per (verdict,
// reason, tenant): a producer that sends a million malformed records a
// minute makes one line a minute, with the count.
const verdictLogWindow = time.Minute

// maxVerdictLogKeys bounds the keys one window tracks. Discarded records
// name tenants the roster does not know, which any producer can invent;
// past the bound they are counted under one key without a tenant.
const maxVerdictLogKeys = 1000

// overflowTenant is the tenant of the key that counts records past
// maxVerdictLogKeys.
const overflowTenant = "(other tenants)"

// verdictKey is what one log line summarises.
type verdictKey struct {
	kind   event.Kind
	reason event.Reason
	tenant string // "" when the record named none it could be trusted with
}

// verdictSample is one key's window: when it opened and the records
// counted since its first line.
type verdictSample struct {
	since time.Time
	count int
}

// verdictSummary is the count of the records of one key seen in a window
// since its first line.
type verdictSummary struct {
	key   verdictKey
	count int
}

// verdictSampler decides which discard and quarantine lines are logged: a
// key's first record at once, then at most one line per window with the
// count of the records seen in it. It does no I/O and reads no clock; the
// caller passes the time.
type verdictSampler struct {
	window time.Duration
	keys   map[verdictKey]*verdictSample
}

func newVerdictSampler(window time.Duration) *verdictSampler {
	return &verdictSampler{window: window, keys: make(map[verdictKey]*verdictSample)}
}

// note counts one record; it reports whether its line is logged now (the
// first record of a key without an open window).
func (s *verdictSampler) note(k verdictKey, now time.Time) bool {
	if e, ok := s.keys[k]; ok {
		e.count++
		return false
	}
	if len(s.keys) >= maxVerdictLogKeys {
		k.tenant = overflowTenant
		if e, ok := s.keys[k]; ok {
			e.count++
			return false
		}
	}
	s.keys[k] = &verdictSample{since: now}
	return true
}

// due returns the counts of windows that ended by now and closes them: a
// window with records counted opens the next one at once (so the key keeps
// at most one line per window), an empty one is forgotten (so the key's
// next record is logged as it happens). Lines come sorted, for stable logs.
func (s *verdictSampler) due(now time.Time) []verdictSummary {
	var out []verdictSummary
	for k, e := range s.keys {
		if now.Sub(e.since) < s.window {
			continue
		}
		if e.count == 0 {
			delete(s.keys, k)
			continue
		}
		out = append(out, verdictSummary{key: k, count: e.count})
		e.since, e.count = now, 0
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].key, out[j].key
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		if a.reason != b.reason {
			return a.reason < b.reason
		}
		return a.tenant < b.tenant
	})
	return out
}

// verdictLog is the sampler with its lock and logger, shared by the batches
// of one poll and the ticker that logs the counts.
type verdictLog struct {
	mu      sync.Mutex
	sampler *verdictSampler
	log     *slog.Logger
}

func newVerdictLog(log *slog.Logger) *verdictLog {
	return &verdictLog{sampler: newVerdictSampler(verdictLogWindow), log: log}
}

// record notes one discarded or quarantined record and logs it when it is
// the first of its key. The line names the record's place in the stream
// and the reason, never header values or the payload (a quarantine detail
// quotes header values, so it is not logged).
func (l *verdictLog) record(k verdictKey, topic string, partition int32, offset int64, now time.Time) {
	l.mu.Lock()
	first := l.sampler.note(k, now)
	l.mu.Unlock()
	if !first {
		return
	}
	l.log.Warn(message(k.kind, 1), append(keyAttrs(k),
		slog.Int("count", 1), slog.String("topic", topic), slog.Int("partition", int(partition)), slog.Int64("offset", offset))...)
}

// flush logs the counts of the windows that ended.
func (l *verdictLog) flush(now time.Time) {
	l.mu.Lock()
	lines := l.sampler.due(now)
	l.mu.Unlock()
	for _, s := range lines {
		l.log.Warn(message(s.key.kind, s.count), append(keyAttrs(s.key),
			slog.Int("count", s.count), slog.Duration("window", l.sampler.window))...)
	}
}

func message(kind event.Kind, count int) string {
	what := "record"
	if count != 1 {
		what = "records"
	}
	if kind == event.Quarantine {
		return what + " quarantined"
	}
	return what + " discarded"
}

func keyAttrs(k verdictKey) []any {
	attrs := []any{slog.String("reason", string(k.reason))}
	if k.tenant != "" {
		attrs = append(attrs, slog.String("tenant_id", k.tenant))
	}
	return attrs
}
