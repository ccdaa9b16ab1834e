package breaker

import (
	"sort"
	"time"
)

// Status is one breaker that is not closed, as Snapshot reports it.
type Status struct {
	Key   string
	State State // Open or HalfOpen
	// Until is when an open breaker's cool-down ends, or when a half-open
	// breaker's outstanding probe is given up.
	Until time.Time
}

// Snapshot lists the breakers that are open or half-open, by key, so that
// other processes and operators can see them. Closed breakers are the
// default and are not listed.
func (s *Set) Snapshot() []Status {
	s.mu.Lock()
	out := make([]Status, 0, s.notClosed)
	for key, b := range s.breakers {
		if b.state != Closed {
			out = append(out, Status{Key: key, State: b.state, Until: b.until})
		}
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
