package queue

import (
	_ "embed"
	"time"

	"github.com/hubctl/hubctl/internal/routing"
)

// Handoff lets an ingest batch lease the first attempts of the jobs it
// creates straight to a dispatcher of the same process, which then attempts
// them without claiming them (docs/architecture.md, "First attempts handed
// over"). Jobs left pending (no room, a control the claim enforces, or older
// due work of the tenant) are claimed as always, and a handed job whose
// process dies is recovered when its lease expires, like any claimed job.
type Handoff interface {
	// ReserveHandoff asks room for n jobs, all or none. ok false leaves them
	// pending.
	ReserveHandoff(n int) (lease HandoffLease, ok bool)
	// CancelHandoff gives back a reservation of n jobs whose batch did not
	// commit.
	CancelHandoff(n int)
	// TakeHandoff queues the jobs of a committed batch, as many as the
	// reservation they were written under.
	TakeHandoff(jobs []ClaimedJob)
}

// HandoffLease is the lease a reservation gives its jobs: owned by Owner
// until Start + the subscription's attempt_timeout + Margin, as a claim at
// Start would lease them.
type HandoffLease struct {
	Owner  string
	Start  time.Time
	Margin time.Duration
}

// candidateLease is what handing a subscription's jobs over needs to know of
// it, beside what matching reads.
type candidateLease struct {
	version        time.Time
	attemptTimeout time.Duration
	// rateLimited subscriptions take their slots in the claim, so their
	// jobs are never handed over.
	rateLimited bool
}

// handoffPlan is one batch's handed-over jobs, reserved before its commit.
type handoffPlan struct {
	to   Handoff
	jobs []ClaimedJob
}

// planHandoff picks the jobs of a batch to hand over and reserves room for
// them: jobs of subscriptions without ordering or rate limit, of tenants
// with no due pending job (blocked, as the batch's snapshot shows them). A
// due pending job of a tenant may be an older event of the same
// subscription, whose first attempt must start before these (first
// attempts start in seq order per subscription); the claim that takes it
// goes first, and the next batch finds the tenant clear. It marks the
// chosen rows of work leased and returns the plan; a zero plan hands
// nothing over.
func planHandoff(to Handoff, work *deliveryWork, routes []routing.Route, st ingestState, records []IngestRecord, inserted map[int64]int64, receivedAt time.Time) handoffPlan {
	if to == nil || len(routes) == 0 {
		return handoffPlan{}
	}
	type choice struct {
		route int
		sub   candidateLease
	}
	var chosen []choice
	for i, r := range routes {
		sub, known := st.leases[r.SubscriptionID]
		if r.OrderingKey == nil && known && !sub.rateLimited && !st.blockedTenants[r.TenantID] {
			chosen = append(chosen, choice{i, sub})
		}
	}
	if len(chosen) == 0 {
		return handoffPlan{}
	}
	lease, ok := to.ReserveHandoff(len(chosen))
	if !ok {
		return handoffPlan{}
	}
	if receivedAt.IsZero() {
		receivedAt = lease.Start
	}
	events := recordsBySeq(records, inserted)
	plan := handoffPlan{to: to, jobs: make([]ClaimedJob, 0, len(chosen))}
	for _, c := range chosen {
		r, sub := routes[c.route], c.sub
		until := lease.Start.Add(sub.attemptTimeout + lease.Margin)
		row := work.jobs[c.route]
		row[5], row[6], row[7] = "in_flight", lease.Owner, until
		plan.jobs = append(plan.jobs, ClaimedJob{
			ID: row[0].([16]byte), LeaseUntil: until, TenantID: r.TenantID,
			SubscriptionID: r.SubscriptionID, SubscriptionUpdatedAt: sub.version,
			Event: claimedEventOf(r.Seq, events[r.Seq], receivedAt),
		})
	}
	return plan
}

// claimedEventOf is the event a claim would have read back for a record
// the batch stored under seq.
func claimedEventOf(seq int64, r *IngestRecord, receivedAt time.Time) ClaimedEvent {
	ev := &r.Event
	return ClaimedEvent{
		Seq: seq, ID: ev.ID, Key: ev.Key, SchemaVersion: ev.SchemaVersion, Source: ev.Source, Type: ev.Type,
		Time: ev.Time, Subject: ev.Subject, DataContentType: ev.DataContentType, DataSchema: ev.DataSchema,
		TraceParent: ev.TraceParent, TraceState: ev.TraceState, Payload: notNull(ev.Data), ReceivedAt: receivedAt,
	}
}

// cancel gives the plan's reservation back: its batch did not commit.
func (p handoffPlan) cancel() {
	if len(p.jobs) > 0 {
		p.to.CancelHandoff(len(p.jobs))
	}
}

// take hands the committed batch's jobs over.
func (p handoffPlan) take() {
	if len(p.jobs) > 0 {
		p.to.TakeHandoff(p.jobs)
	}
}

// recordsBySeq maps the seq of each event a batch stored (inserted, by
// offset) to its record.
func recordsBySeq(records []IngestRecord, inserted map[int64]int64) map[int64]*IngestRecord {
	bySeq := make(map[int64]*IngestRecord, len(inserted))
	for i := range records {
		if seq, ok := inserted[records[i].Offset]; ok {
			bySeq[seq] = &records[i]
		}
	}
	return bySeq
}

// selectBlockedTenants names the tenants of @tenants with a due pending job: a
// probe of delivery_jobs_due each, by a function (migration 26) whose
// probe keeps its plan for the session instead of being planned for every
// batch.
//
//go:embed sql/select_blocked_tenants.sql
var selectBlockedTenants string
