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

// capUse is what one cap (a tenant's, a destination's) has running: the
// attempts started and not done, and when the last of them started.
type capUse struct {
	running int
	started time.Time
}

// fairQueue holds claimed jobs until a worker starts their attempt, the
// tenants' jobs in turn, each tenant's in event order, and counts the
// attempts running so that none starts past its caps (why:
// docs/architecture.md, "Fairness holds up to the attempt").
type fairQueue struct {
	limits inFlightLimits
	clock  func() time.Time

	mu      sync.Mutex
	jobs    map[string][]queuedJob // by tenant, in event (seq) order
	turns   []string               // tenants with queued jobs, in turn order
	next    int                    // index in turns of the tenant to serve next
	queued  int
	running int               // attempts started and not done
	tenants map[string]capUse // by tenant, only while attempts run
	dests   map[string]capUse // by breaker key, only while attempts run
	// arrived is signalled when a job may have become startable: jobs were
	// added or an attempt ended. It never queues up.
	arrived chan struct{}
}

// newFairQueue builds a queue whose caps are limits; clock stamps the
// jobs queued and the attempts started, which the stall decision reads.
func newFairQueue(limits inFlightLimits, clock func() time.Time) *fairQueue {
	return &fairQueue{
		limits: limits, clock: clock, jobs: map[string][]queuedJob{}, tenants: map[string]capUse{}, dests: map[string]capUse{},
		arrived: make(chan struct{}, 1),
	}
}

// push queues jobs and wakes a waiting worker.
func (q *fairQueue) push(jobs ...queuedJob) {
	if len(jobs) == 0 {
		return
	}
	now := q.clock()
	q.mu.Lock()
	// Tenants new to the queue take their turns, in the order they come,
	// before the tenant about to be served again: they have waited longest.
	newcomers := q.next
	for _, job := range jobs {
		job.queuedAt, job.destination = now, breakerKey(*job.sub)
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
	uncount(q.dests, job.destination)
	q.mu.Unlock()
	q.signal()
}

func count(m map[string]capUse, key string, now time.Time) {
	m[key] = capUse{running: m[key].running + 1, started: now}
}

func uncount(m map[string]capUse, key string) {
	use := m[key]
	if use.running <= 1 {
		delete(m, key)
		return
	}
	use.running--
	m[key] = use
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
		if !below(q.tenants[tenant].running, q.limits.tenant) {
			continue
		}
		pending := q.jobs[tenant]
		at := slices.IndexFunc(pending, func(j queuedJob) bool {
			return below(q.dests[j.destination].running, q.limits.destination)
		})
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
		now := q.clock()
		q.queued--
		q.running++
		count(q.tenants, tenant, now)
		count(q.dests, job.destination, now)
		return job, q.queued > 0, true
	}
	return queuedJob{}, false, false
}

// stalled lists the tenants tenantStalled judges stalled at since: claims
// pass them over, and their queued jobs stop counting against the queue's
// room (docs/architecture.md, "Fairness holds up to the attempt").
func (q *fairQueue) stalled(since time.Time) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var tenants []string
	for _, tenant := range q.turns {
		if tenantStalled(q.limits, q.tenants[tenant], q.dests, q.jobs[tenant], since) {
			tenants = append(tenants, tenant)
		}
	}
	return tenants
}

// tenantStalled decides whether a tenant's queued jobs are stuck behind
// its own caps: none of them can start, because the tenant is at its cap
// or each job's destination is at its own, and one of them has waited
// since before since on a cap that has not started an attempt since then
// either. A job waits from when it was queued or when the cap holding it
// last started an attempt, whichever is later, and on two full caps waits
// on the one that started an attempt longer ago. So a slow destination
// whose attempts keep ending and starting (the machine's CPU is busy,
// the destination takes its time) never stalls its tenant, nor do busy
// workers or a process at its total cap: only a cap that stopped moving
// does, such as a destination whose attempts hang. tenant is the tenant's
// running attempts, dests every destination's.
func tenantStalled(limits inFlightLimits, tenant capUse, dests map[string]capUse, queued []queuedJob, since time.Time) bool {
	tenantFull := !below(tenant.running, limits.tenant)
	waited := false
	for _, job := range queued {
		dest := dests[job.destination]
		destFull := !below(dest.running, limits.destination)
		var moved time.Time
		switch {
		case tenantFull && destFull:
			moved = minTime(tenant.started, dest.started)
		case tenantFull:
			moved = tenant.started
		case destFull:
			moved = dest.started
		default:
			return false // this job can start: the tenant's queue moves
		}
		if job.queuedAt.Before(since) && moved.Before(since) {
			waited = true
		}
	}
	return waited
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// unstalledLen is the number of queued jobs of the tenants stalled does
// not list at since: the jobs that bound when the next claim may start.
func (q *fairQueue) unstalledLen(since time.Time) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := q.queued
	for _, tenant := range q.turns {
		if tenantStalled(q.limits, q.tenants[tenant], q.dests, q.jobs[tenant], since) {
			n -= len(q.jobs[tenant])
		}
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
