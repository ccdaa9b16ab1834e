package dispatch

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/service"
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
