package dispatch

import (
	"context"

	"github.com/hubctl/hubctl/internal/store/queue"
)

// The dispatcher is ingest's queue.Handoff: a batch written by this process
// may lease the first attempts of its jobs to it, so they are attempted
// without a claim (docs/architecture.md, "First attempts handed over").

// handoffRoom is the most the queue and the reservations may hold once a
// handover joins them: the mark below which a claim may start (claimRoom
// with a full batch). Handovers never fill the queue past it, so a claim
// (due retries, other instances' jobs, tenants with a backlog) always
// finds room to start when handed jobs are being worked off.
func handoffRoom(workers, claimBatch int) int {
	return workers + (claimers-1)*claimBatch
}

// ReserveHandoff reserves room for n handed jobs, all or none, while the
// dispatcher runs.
func (d *Dispatcher) ReserveHandoff(n int) (queue.HandoffLease, bool) {
	d.claimMu.Lock()
	defer d.claimMu.Unlock()
	if !d.handoffOpen || n < 1 || d.queuedForRoom()+d.reserved+n > handoffRoom(d.cfg.Workers, d.cfg.ClaimBatch) {
		return queue.HandoffLease{}, false
	}
	d.reserved += n
	return queue.HandoffLease{Owner: d.owner, Start: d.clock(), Margin: d.margin + queueAllowance}, true
}

// CancelHandoff gives back a reservation whose batch did not commit.
func (d *Dispatcher) CancelHandoff(n int) {
	d.unreserve(n, "")
}

// TakeHandoff queues the jobs a committed batch leased to this dispatcher.
// Jobs it cannot queue (their subscriptions cannot be read, or dispatch is
// stopping) are handed back, due at once, as a claim's would be.
func (d *Dispatcher) TakeHandoff(jobs []queue.ClaimedJob) {
	defer d.unreserve(len(jobs), "")
	// Bounded like a claim, and detached from the batch's context: the
	// jobs are committed in flight whatever happens to the batch now.
	ctx, cancel := context.WithTimeout(context.Background(), d.drain)
	defer cancel()
	queued, err := d.subs.resolve(ctx, jobs, d.clock())
	if err != nil {
		d.log.Warn("cannot read the subscriptions of handed jobs; handing them back", "jobs", len(jobs), "error", err)
		d.releaseClaimed(ctx, jobs)
		return
	}
	d.claimMu.Lock()
	open := d.handoffOpen
	if open {
		// Under claimMu, so the queue is not drained for shutdown between
		// the check and the push.
		d.queue.push(queued...)
	}
	d.claimMu.Unlock()
	if !open {
		d.releaseClaimed(ctx, jobs)
		return
	}
	d.metrics.handedOver.Add(float64(len(jobs)))
}

// closeHandoff refuses handovers from now on; jobs of reservations already
// made are handed back when they arrive.
func (d *Dispatcher) closeHandoff() {
	d.claimMu.Lock()
	d.handoffOpen = false
	d.claimMu.Unlock()
}
