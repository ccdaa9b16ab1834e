package ingest

import (
	"time"

	"github.com/hubctl/hubctl/internal/match"
)

// filterLogWindow is how often at most one line is logged per subscription
// whose content filter fails: a filter broken for every event of a busy
// topic makes one line a minute, with the count.
const filterLogWindow = time.Minute

// maxFilterLogKeys bounds the subscriptions one sampler remembers; past it
// the ones whose window ended are forgotten first.
const maxFilterLogKeys = 10_000

// filterFailureLine is one log line: a subscription's latest failure and
// how many failures of it the line stands for.
type filterFailureLine struct {
	failure match.FilterFailure
	count   int
}

// filterLogSampler decides which filter failures are logged: a
// subscription's first at once, then at most one a window, counting those
// in between. It reads no clock; the caller passes the time.
type filterLogSampler struct {
	window time.Duration
	subs   map[[16]byte]*filterLogEntry
}

type filterLogEntry struct {
	logged     time.Time // when its last line was logged
	suppressed int       // failures since that line
}

func newFilterLogSampler(window time.Duration) *filterLogSampler {
	return &filterLogSampler{window: window, subs: make(map[[16]byte]*filterLogEntry)}
}

// note counts the failures of one batch and returns the lines to log now.
func (s *filterLogSampler) note(failures []match.FilterFailure, now time.Time) []filterFailureLine {
	var lines []filterFailureLine
	for _, f := range failures {
		e := s.subs[f.SubscriptionID]
		if e == nil {
			s.makeRoom(now)
			e = &filterLogEntry{logged: now.Add(-s.window)}
			s.subs[f.SubscriptionID] = e
		}
		e.suppressed++
		if now.Sub(e.logged) >= s.window {
			lines = append(lines, filterFailureLine{failure: f, count: e.suppressed})
			e.logged, e.suppressed = now, 0
		}
	}
	return lines
}

// makeRoom forgets subscriptions whose window ended when the sampler is
// full. Their uncounted failures are lost to the log, not to the metric.
func (s *filterLogSampler) makeRoom(now time.Time) {
	if len(s.subs) < maxFilterLogKeys {
		return
	}
	for id, e := range s.subs {
		if now.Sub(e.logged) >= s.window {
			delete(s.subs, id)
		}
	}
}
