package dispatch

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// pace measures how fast the workers take jobs and how long a claim takes,
// so that claims can be sized to what the workers work off (claimSize; why
// a rate and not an average job time: docs/architecture.md, "Fairness
// holds up to the attempt").
type pace struct {
	taken atomic.Int64 // jobs taken by workers, ever
	claim atomic.Int64 // moving average of a claim's duration, nanoseconds

	mu         sync.Mutex
	lastAt     time.Time // when the last claim was sized
	lastTaken  int64     // taken at that moment
	perSecond  float64   // moving average of the take rate
	haveSample bool
}

// paceWeight is the weight of the newest sample: 1/8, a window of a few
// dozen claims, so the size follows a change of pace within a second or
// so without jumping at every outlier.
const paceWeight = 8

func (p *pace) jobTaken() { p.taken.Add(1) }

func (p *pace) claimTook(d time.Duration) {
	sample := max(int64(d), 1)
	for {
		old := p.claim.Load()
		next := sample
		if old != 0 {
			next = old + (sample-old)/paceWeight
		}
		if p.claim.CompareAndSwap(old, next) {
			return
		}
	}
}

// estimate is the size the next claim would get, measuring nothing.
func (p *pace) estimate(batch int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.haveSample {
		return batch
	}
	return claimSize(batch, p.perSecond, time.Duration(p.claim.Load()))
}

// claimSize sizes the claim about to start at now: the take rate since the
// previous claim was sized joins the moving average first.
func (p *pace) claimSize(batch int, now time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	taken := p.taken.Load()
	if elapsed := now.Sub(p.lastAt); !p.lastAt.IsZero() && elapsed > 0 {
		rate := float64(taken-p.lastTaken) / elapsed.Seconds()
		if p.haveSample {
			p.perSecond += (rate - p.perSecond) / paceWeight
		} else {
			p.perSecond, p.haveSample = rate, true
		}
	}
	p.lastAt, p.lastTaken = now, taken
	if !p.haveSample {
		return batch
	}
	return claimSize(batch, p.perSecond, time.Duration(p.claim.Load()))
}

// claimSize is how many jobs a claim asks for: what the workers take in
// four claim round trips at perSecond (two claims overlap, and the margin
// keeps a claim from landing on an empty queue when claims slow down), at
// least one and at most the claim batch: the whole batch with fast
// destinations, a job or a few with slow ones (why: docs/architecture.md,
// "Fairness holds up to the attempt"). When supply, not the workers, limits the rate (after an idle spell)
// each claim's jobs are taken within the next round trip, so the size
// grows claim by claim back to the batch. Before any measurement it is
// the batch.
func claimSize(batch int, perSecond float64, claim time.Duration) int {
	if claim <= 0 {
		return batch
	}
	n := math.Ceil(4 * perSecond * claim.Seconds())
	if n >= float64(batch) {
		return batch
	}
	return max(int(n), 1)
}
