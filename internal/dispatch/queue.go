package dispatch

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"
)

// inFlightLimits cap the attempts running at once: in all, per tenant and
// per destination (the breaker's key: tenant and destination). Zero is no
// cap.
type inFlightLimits struct {
	total, tenant, destination int
}

// fairQueue holds claimed jobs until a worker starts their attempt, the
// tenants' jobs in turn, each tenant's in event order, and counts the
// attempts running so that none starts past its caps (why:
// docs/architecture.md, "Fairness holds up to the attempt").
type fairQueue struct {
	limits inFlightLimits

	mu      sync.Mutex
	jobs    map[string][]queuedJob // by tenant, in event (seq) order
	turns   []string               // tenants with queued jobs, in turn order
	next    int                    // index in turns of the tenant to serve next
	queued  int
	running int            // attempts started and not done
	tenants map[string]int // running attempts by tenant
	dests   map[string]int // running attempts by breaker key
	// arrived is signalled when a job may have become startable: jobs were
	// added or an attempt ended. It never queues up.
	arrived chan struct{}
}

func newFairQueue(limits inFlightLimits) *fairQueue {
	return &fairQueue{
		limits: limits, jobs: map[string][]queuedJob{}, tenants: map[string]int{}, dests: map[string]int{},
		arrived: make(chan struct{}, 1),
	}
}

// push queues jobs at now and wakes a waiting worker.
func (q *fairQueue) push(now time.Time, jobs ...queuedJob) {
	if len(jobs) == 0 {
		return
	}
	q.mu.Lock()
	// Tenants new to the queue take their turns, in the order they come,
	// before the tenant about to be served again: they have waited longest.
	newcomers := q.next
	for _, job := range jobs {
		job.queuedAt = now
		if len(q.jobs[job.TenantID]) == 0 {
			q.turns = slices.Insert(q.turns, newcomers, job.TenantID)
			newcomers++
		}
		// Each tenant's jobs wait in event order (docs/concepts.md, Ordering: first
		// attempts start in seq order). Two claims in flight can land in
		// either order; the later one's jobs still queued behind an
		// earlier event's are put back behind it.
		pending := q.jobs[job.TenantID]
		at := sort.Search(len(pending), func(i int) bool { return pending[i].Event.Seq > job.Event.Seq })
		q.jobs[job.TenantID] = slices.Insert(pending, at, job)
	}
	q.queued += len(jobs)
	q.mu.Unlock()
	q.signal()
}

// take waits for a job whose attempt may start within the caps, counts
// the attempt as running and returns the job; false once ctx ends. Its
// caller ends the attempt with done.
func (q *fairQueue) take(ctx context.Context) (queuedJob, bool) {
	for {
		if ctx.Err() != nil {
			return queuedJob{}, false
		}
		if job, more, ok := q.pop(); ok {
			if more {
				// One signal wakes one worker; pass it on while jobs remain.
				q.signal()
			}
			return job, true
		}
		select {
		case <-ctx.Done():
			return queuedJob{}, false
		case <-q.arrived:
		}
	}
}

// done ends the running attempt of a job take returned: its caps have room
// again.
func (q *fairQueue) done(job queuedJob) {
	q.mu.Lock()
	q.running--
	uncount(q.tenants, job.TenantID)
	uncount(q.dests, job.destination())
	q.mu.Unlock()
	q.signal()
}

func uncount(m map[string]int, key string) {
	if m[key] <= 1 {
		delete(m, key)
		return
	}
	m[key]--
}

// below reports whether n running attempts leave room under limit.
func below(n, limit int) bool { return limit <= 0 || n < limit }

// pop removes the next startable job in turn, reporting whether more jobs
// remain queued. A tenant at its cap is passed over, and so is a job whose
// destination is at its cap, for the tenant's next job of another
// destination: the jobs of one destination keep their order, and nothing
// waits behind a destination but that destination's own jobs.
func (q *fairQueue) pop() (job queuedJob, more, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.queued == 0 || !below(q.running, q.limits.total) {
		return queuedJob{}, false, false
	}
	for i := range q.turns {
		turn := (q.next + i) % len(q.turns)
		tenant := q.turns[turn]
		if !below(q.tenants[tenant], q.limits.tenant) {
			continue
		}
		pending := q.jobs[tenant]
		at := q.startable(pending)
		if at < 0 {
			continue
		}
		job = pending[at]
		pending = slices.Delete(pending, at, at+1)
		if len(pending) == 0 {
			delete(q.jobs, tenant)
			q.turns = slices.Delete(q.turns, turn, turn+1)
			q.next = turn
		} else {
			q.jobs[tenant] = pending
			q.next = turn + 1
		}
		if q.next >= len(q.turns) {
			q.next = 0
		}
		q.queued--
		q.running++
		q.tenants[tenant]++
		q.dests[job.destination()]++
		return job, q.queued > 0, true
	}
	return queuedJob{}, false, false
}

// startable is the index of the first of a tenant's jobs whose destination
// is under its cap, or -1.
func (q *fairQueue) startable(pending []queuedJob) int {
	if q.limits.destination <= 0 {
		return 0
	}
	for i, job := range pending {
		if q.dests[job.destination()] < q.limits.destination {
			return i
		}
	}
	return -1
}

// stalled lists the tenants whose oldest queued job was queued before
// since: their caps hold their jobs back, and claiming more of them would
// only fill the queue (docs/architecture.md, "Fairness holds up to the
// attempt").
func (q *fairQueue) stalled(since time.Time) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var tenants []string
	for _, tenant := range q.turns {
		if slices.ContainsFunc(q.jobs[tenant], func(j queuedJob) bool { return j.queuedAt.Before(since) }) {
			tenants = append(tenants, tenant)
		}
	}
	return tenants
}

// lenExcept is the number of queued jobs of tenants not in stalled: the
// jobs that bound when the next claim may start.
func (q *fairQueue) lenExcept(stalled []string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := q.queued
	for _, tenant := range stalled {
		n -= len(q.jobs[tenant])
	}
	return n
}

// remove takes out and returns the queued jobs drop selects, whatever
// their turn.
func (q *fairQueue) remove(drop func(queuedJob) bool) []queuedJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	var removed []queuedJob
	for i := 0; i < len(q.turns); {
		tenant := q.turns[i]
		kept := slices.DeleteFunc(q.jobs[tenant], func(j queuedJob) bool {
			if drop(j) {
				removed = append(removed, j)
				return true
			}
			return false
		})
		if len(kept) > 0 {
			q.jobs[tenant] = kept
			i++
			continue
		}
		delete(q.jobs, tenant)
		q.turns = slices.Delete(q.turns, i, i+1)
		if i < q.next {
			q.next--
		}
	}
	if q.next >= len(q.turns) {
		q.next = 0
	}
	q.queued -= len(removed)
	return removed
}

// drain removes and returns every queued job.
func (q *fairQueue) drain() []queuedJob {
	return q.remove(func(queuedJob) bool { return true })
}

// len is the number of queued jobs.
func (q *fairQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued
}

func (q *fairQueue) signal() {
	select {
	case q.arrived <- struct{}{}:
	default:
	}
}
