package dispatch

import (
	"context"
	"slices"
	"sort"
	"sync"
)

// fairQueue holds claimed jobs until a worker takes them, the tenants' jobs
// in turn, each tenant's in event order (why: docs/architecture.md,
// "Fairness holds up to the attempt").
type fairQueue struct {
	mu      sync.Mutex
	jobs    map[string][]queuedJob // by tenant, in event (seq) order
	turns   []string               // tenants with queued jobs, in turn order
	next    int                    // index in turns of the tenant to serve next
	queued  int
	arrived chan struct{} // signalled when jobs were added; never queues up
}

func newFairQueue() *fairQueue {
	return &fairQueue{jobs: map[string][]queuedJob{}, arrived: make(chan struct{}, 1)}
}

// push queues jobs and wakes a waiting worker.
func (q *fairQueue) push(jobs ...queuedJob) {
	if len(jobs) == 0 {
		return
	}
	q.mu.Lock()
	// Tenants new to the queue take their turns, in the order they come,
	// before the tenant about to be served again: they have waited longest.
	newcomers := q.next
	for _, job := range jobs {
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

// take waits for a job and returns the next tenant's oldest; false once ctx
// ends.
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

// pop removes the next job in turn, reporting whether more remain.
func (q *fairQueue) pop() (job queuedJob, more, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.queued == 0 {
		return queuedJob{}, false, false
	}
	tenant := q.turns[q.next]
	pending := q.jobs[tenant]
	job = pending[0]
	pending[0] = queuedJob{} // drop the reference for the collector
	if pending = pending[1:]; len(pending) == 0 {
		delete(q.jobs, tenant)
		q.turns = slices.Delete(q.turns, q.next, q.next+1)
	} else {
		q.jobs[tenant] = pending
		q.next++
	}
	if q.next >= len(q.turns) {
		q.next = 0
	}
	q.queued--
	return job, q.queued > 0, true
}

// drain removes and returns every queued job.
func (q *fairQueue) drain() []queuedJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	var all []queuedJob
	for _, tenant := range q.turns {
		all = append(all, q.jobs[tenant]...)
	}
	q.jobs, q.turns, q.next, q.queued = map[string][]queuedJob{}, nil, 0, 0
	return all
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
