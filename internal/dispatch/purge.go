package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/store/lifecycle"
	"github.com/hubctl/hubctl/internal/store/queue"
)

// A tenant purge (lifecycle.PurgeTenant) waits until none of the tenant's jobs
// is in flight under a live lease. Its notification lets every dispatcher
// end that wait at once: attempts of the tenant in progress are cut short
// and their jobs canceled, and claimed or handed jobs of the tenant are
// canceled when a worker takes them instead of attempted. Without the
// notification (a dispatcher not listening) the purge still waits, until
// the attempts end or their leases do.

// errPurged is the cause of an attempt cut short by its tenant's purge.
var errPurged = errors.New("the tenant is being purged")

// fenceMemory is how long a fence is kept: longer than any lease, so no
// job claimed before the fence is still queued once it is forgotten (one
// whose lease no longer covers an attempt is released, not attempted).
const fenceMemory = 10 * time.Minute

// purgeFences holds the fences of purges this dispatcher heard of and the
// attempts in progress, by tenant, that a fence cuts short.
type purgeFences struct {
	mu      sync.Mutex
	fences  map[string]heardFence
	running map[string]map[*runningAttempt]struct{}
}

type heardFence struct {
	lifecycle.PurgeFence
	at time.Time
}

type runningAttempt struct {
	seq    int64
	cancel context.CancelCauseFunc
}

func newPurgeFences() *purgeFences {
	return &purgeFences{fences: map[string]heardFence{}, running: map[string]map[*runningAttempt]struct{}{}}
}

// start registers an attempt of job. fenced is true when a purge covers
// the job: it must not be attempted. Otherwise ctx is cancelled (cause
// errPurged) by a fence heard while it runs, and done unregisters it.
func (p *purgeFences) start(parent context.Context, job queue.ClaimedJob) (ctx context.Context, done func(), fenced bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f, ok := p.fences[job.TenantID]; ok && f.Covers(job.TenantID, job.Event.Seq) {
		return nil, nil, true
	}
	ctx, cancel := context.WithCancelCause(parent)
	a := &runningAttempt{seq: job.Event.Seq, cancel: cancel}
	if p.running[job.TenantID] == nil {
		p.running[job.TenantID] = map[*runningAttempt]struct{}{}
	}
	p.running[job.TenantID][a] = struct{}{}
	return ctx, func() {
		p.mu.Lock()
		delete(p.running[job.TenantID], a)
		if len(p.running[job.TenantID]) == 0 {
			delete(p.running, job.TenantID)
		}
		p.mu.Unlock()
		cancel(nil)
	}, false
}

// fence keeps f, forgets fences older than fenceMemory, and cuts short the
// attempts f covers. It reports how many it cut.
func (p *purgeFences) fence(f lifecycle.PurgeFence, now time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for tenant, old := range p.fences {
		if now.Sub(old.at) > fenceMemory {
			delete(p.fences, tenant)
		}
	}
	if old, ok := p.fences[f.Tenant]; !ok || old.Seq <= f.Seq {
		p.fences[f.Tenant] = heardFence{PurgeFence: f, at: now}
	}
	cut := 0
	for a := range p.running[f.Tenant] {
		if f.Covers(f.Tenant, a.seq) {
			a.cancel(errPurged)
			cut++
		}
	}
	return cut
}

// cancelPurged settles a job of a tenant being purged that this worker
// will not attempt, or whose attempt the purge cut short.
func (d *Dispatcher) cancelPurged(ctx context.Context, job queuedJob, log *slog.Logger) {
	if _, err := d.lifecycle.CancelPurged(context.WithoutCancel(ctx), d.owner, []uuid.UUID{job.ID}); err != nil {
		log.Warn("cannot cancel a job of a tenant being purged; the purge waits for its lease to end", "error", err)
		return
	}
	log.Info("job of a tenant being purged canceled without an attempt")
}

// listenPurges applies the fences of tenant purges as they are notified.
func (d *Dispatcher) listenPurges(ctx context.Context) {
	d.listenLoop(ctx, d.lifecycle.ListenPurges, "tenant purges", "a purge waits for this process's attempts to end", func() {},
		func(payload string) {
			f, err := lifecycle.ParsePurgeFence(payload)
			if err != nil {
				d.log.Warn("ignoring a tenant purge notification", "error", err)
				return
			}
			now := d.clock()
			cut := d.purges.fence(f, now)
			// The purge deletes the tenant's stored breakers; forgetting
			// them here keeps the next heartbeat from writing them back
			// and the gauge from counting them.
			forgot := d.breakers.Forget(func(key string) bool { return destinationOf(key).TenantID == f.Tenant }, now)
			d.log.Info("tenant being purged: its jobs are no longer attempted", "tenant_id", f.Tenant, "attempts_cut_short", cut, "breakers_forgotten", forgot)
		})
}
