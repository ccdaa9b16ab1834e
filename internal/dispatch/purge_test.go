package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/store/lifecycle"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/syncbuf"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// After a tenant purge answers, nothing of the tenant is sent or stored:
// two dispatchers (two processes sharing the database) are in the middle
// of its deliveries, some held by a receiver that does not answer, others
// answered at once and being recorded. The purge cuts the held attempts
// short instead of waiting for their timeout (a minute, past the purge's
// deadline here); its receivers hear nothing more once it answered, while
// another tenant's events go through both dispatchers; no row of the
// tenant is left, no attempt without its job, and no ERROR is logged.
func TestPurgeLeavesNothingOfTheTenantSentOrStored(t *testing.T) {
	e := newEnv(t)
	held := newReceiver(t, func(r *http.Request, _ int) int {
		<-r.Context().Done() // until the attempt is cut short
		return http.StatusOK
	})
	fast := newReceiver(t, nil)
	marker := newReceiver(t, nil)
	minute := func(in *hubapi.SubscriptionCreate) { in.AttemptTimeout = "60s" }
	heldSub, _ := e.webhookSub("acme", held.URL, minute)
	fastSub, _ := e.webhookSub("acme", fast.URL)
	markerSub, _ := e.webhookSub("globex", marker.URL)

	var logs syncbuf.Buffer
	logged := func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	e.start(logged)
	e.start(logged)
	e.insertJobs("acme", heldSub, 4)
	e.insertJobs("acme", fastSub, 3_000)
	waitFor(t, "attempts held by the receiver and deliveries being recorded", func() bool {
		return len(held.Requests()) == 4 && len(fast.Requests()) >= 100
	})

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	res, err := service.NewTenants(e.store.Catalog, e.store.Lifecycle, time.Now).Purge(ctx, "acme")
	if err != nil {
		t.Fatalf("purge while attempts are in flight: %v", err)
	}
	heldAfter, fastAfter := len(held.Requests()), len(fast.Requests())
	t.Logf("purge answered with %d held and %d fast deliveries made: %v", heldAfter, fastAfter, res.Removed)

	e.insertJobs("globex", markerSub, 64)
	waitFor(t, "the other tenant's events delivered and recorded through both dispatchers", func() bool {
		return len(marker.Requests()) == 64 &&
			e.count(`SELECT count(*) FROM delivery_jobs WHERE tenant_id = 'globex' AND state = 'succeeded'`) == 64
	})
	if n := len(held.Requests()); n != heldAfter {
		t.Errorf("the held receiver got %d requests after the purge answered", n-heldAfter)
	}
	if n := len(fast.Requests()); n != fastAfter {
		t.Errorf("the fast receiver got %d requests after the purge answered", n-fastAfter)
	}
	for what, sql := range map[string]string{
		"jobs":     `SELECT count(*) FROM delivery_jobs WHERE tenant_id = 'acme'`,
		"events":   `SELECT count(*) FROM events WHERE tenant_id = 'acme'`,
		"attempts": `SELECT count(*) FROM delivery_attempts a WHERE NOT EXISTS (SELECT 1 FROM delivery_jobs j WHERE j.id = a.job_id)`,
	} {
		if n := e.count(sql); n != 0 {
			t.Errorf("%d %s of the purged tenant are left", n, what)
		}
	}
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "level=ERROR") {
			t.Errorf("logged: %s", line)
		}
	}
}

// A purge heard while a failed attempt is being recorded does not cut the
// recording short. A failure's transaction takes the ingest lock shared, so
// it waits behind a purge's fence, which holds it exclusively, and the
// fence's notification arrives while it waits; cut, the recording would
// leave the job in flight under its lease (here over a minute) and the
// purge waiting for it past its deadline. The test holds the ingest lock
// itself and sends the notification while the recording is seen waiting
// for it, so the order is the same in every run.
func TestPurgeHeardWhileAFailureIsRecordedDoesNotStrandTheJob(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(*http.Request, int) int { return http.StatusServiceUnavailable })
	sub, _ := e.webhookSub("acme", rc.URL, func(in *hubapi.SubscriptionCreate) { in.AttemptTimeout = "60s" })
	e.insertJobs("acme", sub, 1)

	ctx := context.Background()
	fence, err := e.store.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fence.Rollback(ctx) }()
	if _, err := fence.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, pg.IngestLockKey); err != nil {
		t.Fatal(err)
	}

	var logs syncbuf.Buffer
	e.start(func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	waitFor(t, "the failure's recording waiting for the ingest lock", func() bool {
		return len(rc.Requests()) == 1 && e.count(`SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND NOT l.granted AND a.datname = current_database() AND a.query LIKE '%advisory_xact_lock_shared%'`) > 0
	})
	payload := fmt.Sprintf("%d acme", int64(math.MaxInt64))
	if _, err := e.store.Pool.Exec(ctx, `SELECT pg_notify($1, $2)`, lifecycle.PurgeChannel, payload); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the dispatcher to hear the purge", func() bool {
		return strings.Contains(logs.String(), "tenant being purged")
	})
	if err := fence.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	purgeCtx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	if _, err := service.NewTenants(e.store.Catalog, e.store.Lifecycle, time.Now).Purge(purgeCtx, "acme"); err != nil {
		t.Fatalf("purge after a failure's recording heard it: %v", err)
	}
	if n := e.count(`SELECT count(*) FROM delivery_jobs WHERE tenant_id = 'acme'`); n != 0 {
		t.Errorf("%d jobs of the purged tenant are left", n)
	}
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "level=ERROR") {
			t.Errorf("logged: %s", line)
		}
	}
}
