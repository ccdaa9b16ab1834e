package dispatch

import (
	"math"
	"sync/atomic"
	"time"
)

// pace keeps moving averages of how long a worker spends on a job and how
// long a claim takes, so that claims can be sized to the rate jobs are
// worked off (claimSize).
type pace struct {
	perJob atomic.Int64 // nanoseconds
	claim  atomic.Int64 // nanoseconds
}

// paceWeight is the weight of the newest sample: 1/8, a window of a few
// dozen jobs or claims, so the size follows a destination that slows down
// within a second or so without jumping at every outlier.
const paceWeight = 8

func (p *pace) jobTook(d time.Duration)   { observe(&p.perJob, d) }
func (p *pace) claimTook(d time.Duration) { observe(&p.claim, d) }

func observe(avg *atomic.Int64, d time.Duration) {
	sample := max(int64(d), 1)
	for {
		old := avg.Load()
		next := sample
		if old != 0 {
			next = old + (sample-old)/paceWeight
		}
		if avg.CompareAndSwap(old, next) {
			return
		}
	}
}

// claimSize is how many jobs the next claim asks for: what the workers
// work off in two claim round trips (two claims overlap), at least one
// and at most the claim batch. With fast destinations that is the whole
// batch, so the round trip is paid per batch. With slow ones it is a job
// or a few, so the local queue stays shallow: a claimed job waits behind
// about one job per worker, and a quiet tenant's new job is claimed as
// soon as a worker frees instead of after a batch of a noisy tenant's
// slow jobs. Before any measurement it is the batch.
func claimSize(batch, workers int, perJob, claim time.Duration) int {
	if perJob <= 0 || claim <= 0 {
		return batch
	}
	n := math.Ceil(2 * float64(workers) * float64(claim) / float64(perJob))
	if n >= float64(batch) {
		return batch
	}
	return max(int(n), 1)
}

func (p *pace) claimSize(batch, workers int) int {
	return claimSize(batch, workers, time.Duration(p.perJob.Load()), time.Duration(p.claim.Load()))
}
