package portal_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

var deliveryRow = regexp.MustCompile(`<a href="/portal/deliveries/`)

func TestDeliveriesByCreationTimeAndTheLastDaysCounts(t *testing.T) {
	h := startHub(t)
	ctx := context.Background()
	receiver := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(receiver.Close)
	sub, err := h.control.As(hubapi.Admin()).CreateSubscription(ctx, "acme", hubapi.SubscriptionCreate{Name: "orders",
		Sink: []byte(`{"type":"webhook","url":"` + receiver.URL + `"}`), EventTypes: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, h.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// More than a page, all created now.
	if _, err := pool.Exec(ctx, seedDeliveriesSQL, pgx.StrictNamedArgs{"tenant_id": "acme", "subscription_id": sub.ID, "n": 60}); err != nil {
		t.Fatal(err)
	}
	c := browser(t)
	get(t, c, h.link("acme", false))
	list := h.url + "/portal/subscriptions/" + sub.ID + "/deliveries"

	// A duration counts back from now; the next page repeats the window
	// as the time it meant, so it does not slide while pages are read.
	before := time.Now()
	first := get(t, c, list+"?since=1h")
	if n := len(deliveryRow.FindAllString(first.body, -1)); first.status != http.StatusOK || n != 50 {
		t.Fatalf("since 1h: %d with %d rows", first.status, n)
	}
	m := nextPage.FindStringSubmatch(first.body)
	if m == nil {
		t.Fatalf("since 1h: no next page link")
	}
	next, err := url.Parse(strings.ReplaceAll(m[1], "&amp;", "&"))
	if err != nil {
		t.Fatal(err)
	}
	since, err := time.Parse(time.RFC3339Nano, next.Query().Get("since"))
	if err != nil || since.Before(before.Add(-time.Hour-time.Second)) || since.After(time.Now().Add(-time.Hour)) {
		t.Errorf("the next page's since %q, %v: want the time an hour before the first page", next.Query().Get("since"), err)
	}
	second := get(t, c, h.url+next.String())
	if n := len(deliveryRow.FindAllString(second.body, -1)); second.status != http.StatusOK || n != 10 {
		t.Errorf("the window's second page: %d with %d rows", second.status, n)
	}

	empty := get(t, c, list+"?until=1h")
	if empty.status != http.StatusOK || deliveryRow.MatchString(empty.body) || !strings.Contains(empty.body, "created in that window") {
		t.Errorf("until 1h: %d\n%s", empty.status, empty.body)
	}

	// The subscription list shows each one's last day, linked to the
	// deliveries of that day: of 60 consecutive seqs every tenth is dead.
	home := get(t, c, h.url+"/portal/")
	for _, want := range []string{`deliveries?since=24h">54 delivered</a>, <span class="badge bad">6 dead</span>`, `">0 delivered</a>`} {
		if home.status != http.StatusOK || !strings.Contains(home.body, want) {
			t.Errorf("the subscription list lacks %s\n%s", want, home.body)
		}
	}

	for _, bad := range []struct{ query, field, want string }{
		{"?since=yesterday", "since", `since &#34;yesterday&#34;`},
		{"?until=-1h", "until", "must be positive"},
		// The form reads both; the hub refuses the window.
		{"?since=2026-12-02T00:00:00Z&until=2026-12-01T00:00:00Z", "until", "must be after since"},
	} {
		refused := get(t, c, list+bad.query)
		if refused.status != http.StatusBadRequest || !strings.Contains(refused.body, bad.want) ||
			!strings.Contains(refused.body, `id="`+bad.field+`"`) || !regexp.MustCompile(`id="`+bad.field+`"[^>]*aria-invalid="true"`).MatchString(refused.body) {
			t.Errorf("%s: %d, want 400 saying %q on %s\n%s", bad.query, refused.status, bad.want, bad.field, refused.body)
		}
	}
}
