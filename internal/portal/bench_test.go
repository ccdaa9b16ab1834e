package portal_test

import (
	"context"
	_ "embed"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hubctl/hubctl/internal/testutil/hubtest"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

//go:embed testdata/seed_deliveries.sql
var seedDeliveriesSQL string

var nextPage = regexp.MustCompile(`href="([^"]+)" rel="next"`)

// BenchmarkDeliveriesPage renders a subscription's deliveries page on the
// server, through the API's middleware and the session's lookup, for a
// subscription with 100,000 deliveries: its first page and a page deep in
// its history, which the cursor makes as cheap as the first, and the first
// page of a time window: one that fills it and two that match nothing.
// It reports the p50 and p99 of a page's time (docs/benchmarks.md, Portal
// deliveries page).
//
//	go test -run '^$' -bench DeliveriesPage -benchtime 200x ./internal/portal/
func BenchmarkDeliveriesPage(b *testing.B) {
	const deliveries = 100_000
	ctx := context.Background()
	dsn := pgtest.DSN(b)
	control, base := hubtest.Start(b, dsn, map[string]string{
		"STREAMING_HUB_POSTGRES_DSN":        dsn,
		"STREAMING_HUB_ENV":                 "local",
		"STREAMING_HUB_DEV_KEK":             testKEK,
		"STREAMING_HUB_ALLOW_PRIVATE_SINKS": "true",
	})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	b.Cleanup(receiver.Close)
	admin := control.As(hubapi.Admin())
	if _, err := admin.CreateTenant(ctx, "acme"); err != nil {
		b.Fatal(err)
	}
	sub, err := admin.CreateSubscription(ctx, "acme", hubapi.SubscriptionCreate{Name: "busy",
		Sink: []byte(`{"type":"webhook","url":"` + receiver.URL + `"}`), EventTypes: []string{"*"}})
	if err != nil {
		b.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, seedDeliveriesSQL, pgx.StrictNamedArgs{"tenant_id": "acme", "subscription_id": sub.ID, "n": deliveries}); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	link, err := admin.CreatePortalLink(ctx, "acme", hubapi.PortalLinkCreate{})
	if err != nil {
		b.Fatal(err)
	}
	c := browser(b)
	if resp, err := c.Get(link.URL); err != nil {
		b.Fatal(err)
	} else {
		resp.Body.Close()
	}

	first := base + "/portal/subscriptions/" + sub.ID + "/deliveries"
	deep := first
	// Half-way through the history, by following the pages' own links.
	for range deliveries / 50 / 2 {
		deep = base + nextPage.FindStringSubmatch(fetch(b, c, deep))[1]
	}
	// A window: since an hour ago fills the first page at once; until an
	// hour ago matches none of the 100,000, and the seq bound from when
	// their events were received ends the scan at once; since a time after
	// all of them matches none either, and nothing bounds that scan, which
	// reads all 100,000 (a quiet subscription's recent window over a long
	// history costs the same).
	later := url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	for _, page := range []struct{ name, url string }{{"first", first}, {"deep", deep},
		{"since-1h", first + "?since=1h"}, {"until-1h-none", first + "?until=1h"}, {"since-later-none", first + "?since=" + later}} {
		b.Run(page.name, func(b *testing.B) {
			times := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				fetch(b, c, page.url)
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

func fetch(b *testing.B, c *http.Client, url string) string {
	resp, err := c.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(body)
}
