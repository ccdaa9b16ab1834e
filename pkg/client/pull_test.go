package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestReadEventsRequest(t *testing.T) {
	cases := []struct {
		name  string
		limit int
		after *int64
		query string
	}{
		{"from the cursor", 0, nil, "subscription_id=s%2F1"},
		{"a page after a seq", 50, new(int64(0)), "after=0&limit=50&subscription_id=s%2F1"},
	}
	for _, tc := range cases {
		srv, last := fakeHub(t, http.StatusOK, `{"items":[{"seq":7,"ceId":"a","payload":{"n":1}}],"next_cursor":null}`, nil)
		c, err := New(srv.URL, WithToken("tok"))
		if err != nil {
			t.Fatal(err)
		}
		page, err := c.ReadEvents(context.Background(), "", "s/1", hubapi.PullParams{Limit: tc.limit, After: tc.after})
		if err != nil || len(page.Items) != 1 || page.Items[0].Seq != 7 || string(page.Items[0].Payload) != `{"n":1}` || page.NextCursor != nil {
			t.Errorf("%s: %+v, %v", tc.name, page, err)
		}
		if got := last(); got.method != http.MethodGet || got.path != "/v1/events" || got.query != tc.query {
			t.Errorf("%s: sent %s %s?%s, want GET /v1/events?%s", tc.name, got.method, got.path, got.query, tc.query)
		}
	}
}

func TestNextPollInterval(t *testing.T) {
	const lo, hi = 100 * time.Millisecond, time.Second
	cases := []struct {
		current time.Duration
		n       int
		want    time.Duration
	}{
		{lo, 0, 200 * time.Millisecond},
		{600 * time.Millisecond, 0, hi},
		{hi, 0, hi},
		{hi, 3, lo},
		{0, 0, lo},
	}
	for _, tc := range cases {
		if got := NextPollInterval(tc.current, tc.n, lo, hi); got != tc.want {
			t.Errorf("NextPollInterval(%s, %d) = %s, want %s", tc.current, tc.n, got, tc.want)
		}
	}
}

func TestIDWindowForgetsTheOldest(t *testing.T) {
	w := newIDWindow(2)
	for _, step := range []struct {
		id   string
		want bool
	}{{"a", true}, {"b", true}, {"a", false}, {"c", true}, {"b", false}, {"a", true}, {"c", false}} {
		if got := w.add(step.id); got != step.want {
			t.Errorf("add(%q) = %v, want %v", step.id, got, step.want)
		}
	}
}

// pullHub serves GET /v1/events over an in-memory stream with a cursor, as
// the hub does, and answers with the refusals queued in fail first.
type pullHub struct {
	mu     sync.Mutex
	events []hubapi.PullEvent
	cursor int64
	fail   []func(http.ResponseWriter) // answered first, one per request
	afters []string                    // the after of each request served
}

func (h *pullHub) add(ids ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		h.events = append(h.events, hubapi.PullEvent{Seq: int64(len(h.events) + 1), CEID: id, Payload: json.RawMessage(`{}`)})
	}
}

func (h *pullHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.fail) > 0 {
		refuse := h.fail[0]
		h.fail = h.fail[1:]
		refuse(w)
		return
	}
	q := r.URL.Query()
	h.afters = append(h.afters, q.Get("after"))
	limit, _ := strconv.Atoi(q.Get("limit"))
	from := h.cursor
	if after := q.Get("after"); after != "" {
		from, _ = strconv.ParseInt(after, 10, 64)
	}
	page := hubapi.PullPage{Items: []hubapi.PullEvent{}}
	for _, e := range h.events {
		if e.Seq > from && len(page.Items) < limit {
			page.Items = append(page.Items, e)
		}
	}
	if n := len(page.Items); n > 0 {
		h.cursor = max(h.cursor, page.Items[n-1].Seq)
		if n == limit {
			page.NextCursor = &page.Items[n-1].Seq
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page)
}

func refusal(status int, code, retryAfter string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"code":%q,"message":"refused"}`, code)
	}
}

func startPullHub(t *testing.T, hub *pullHub) *Client {
	t.Helper()
	srv := httptest.NewServer(hub)
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, WithToken("tok"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// drain reads events until Next fails, and returns their ids and the error.
func drain(ctx context.Context, p *Pull) ([]string, error) {
	var ids []string
	for {
		e, err := p.Next(ctx)
		if err != nil {
			return ids, err
		}
		ids = append(ids, e.CEID)
	}
}

func TestPullPagesUntilAShortPage(t *testing.T) {
	hub := &pullHub{}
	hub.add("a", "b", "c", "d", "e", "f", "g")
	p := startPullHub(t, hub).Pull("", "sub", PullOptions{Limit: 3})
	ids, err := drain(context.Background(), p)
	if !errors.Is(err, io.EOF) || fmt.Sprint(ids) != "[a b c d e f g]" {
		t.Fatalf("read %v, %v; want a..g then EOF", ids, err)
	}
	// The first read starts at the hub's cursor; the next ones after the
	// last seq received.
	if fmt.Sprint(hub.afters) != "[ 3 6]" {
		t.Errorf("afters %q", hub.afters)
	}
}

func TestPullFollowsDedupsAndWaitsOutRefusals(t *testing.T) {
	hub := &pullHub{}
	hub.add("a", "b")
	p := startPullHub(t, hub).Pull("", "sub", PullOptions{Limit: 10, Follow: true, PollInterval: time.Millisecond, MaxPollInterval: 5 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	next := func(want string) {
		t.Helper()
		e, err := p.Next(ctx)
		if err != nil || e.CEID != want {
			t.Fatalf("next: %q, %v; want %q", e.CEID, err, want)
		}
	}
	next("a")
	next("b")

	// Caught up: the follower polls, through a 503 without Retry-After and
	// a rate limit, until events come; "a" again (a redelivery under a new
	// seq) is dropped.
	hub.mu.Lock()
	hub.fail = append(hub.fail, refusal(http.StatusServiceUnavailable, "draining", ""), refusal(http.StatusTooManyRequests, "rate_limited", "1"))
	hub.mu.Unlock()
	start := time.Now()
	go func() {
		time.Sleep(20 * time.Millisecond)
		hub.add("a", "c")
	}()
	next("c")
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("came back after %s, before the 429's Retry-After of 1s", waited)
	}

	// Ending the context ends the iteration with its error.
	stopCtx, stop := context.WithCancel(ctx)
	go func() {
		time.Sleep(20 * time.Millisecond)
		stop()
	}()
	if _, err := p.Next(stopCtx); !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: %v", err)
	}
}

func TestPullStopsOnErrorsThatWaitingCannotFix(t *testing.T) {
	cases := []struct {
		name   string
		follow bool
		fail   []func(http.ResponseWriter)
		status int
	}{
		{"unknown subscription", true, []func(http.ResponseWriter){refusal(http.StatusNotFound, "subscription_not_found", "")}, http.StatusNotFound},
		{"push subscription", true, []func(http.ResponseWriter){refusal(http.StatusConflict, "not_a_pull_subscription", "")}, http.StatusConflict},
		{"a dump gives up on a hub that stays down", false, []func(http.ResponseWriter){
			refusal(http.StatusServiceUnavailable, "store_unavailable", ""), refusal(http.StatusServiceUnavailable, "store_unavailable", ""),
			refusal(http.StatusServiceUnavailable, "store_unavailable", ""), refusal(http.StatusServiceUnavailable, "store_unavailable", ""),
		}, http.StatusServiceUnavailable},
	}
	for _, tc := range cases {
		hub := &pullHub{fail: tc.fail}
		hub.add("a")
		p := startPullHub(t, hub).Pull("", "sub", PullOptions{Follow: tc.follow, PollInterval: time.Millisecond, MaxPollInterval: time.Millisecond})
		_, err := p.Next(context.Background())
		var apiErr *Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status {
			t.Errorf("%s: %v, want HTTP %d", tc.name, err, tc.status)
		}
	}
}

func TestPullMaxReadsAndAcksNoMoreThanItReturns(t *testing.T) {
	for _, follow := range []bool{false, true} {
		hub := &pullHub{}
		hub.add("a", "b", "c", "d", "e", "f", "g")
		p := startPullHub(t, hub).Pull("", "sub", PullOptions{Limit: 3, Max: 5, Follow: follow, PollInterval: time.Millisecond})
		ids, err := drain(context.Background(), p)
		if !errors.Is(err, io.EOF) || fmt.Sprint(ids) != "[a b c d e]" {
			t.Fatalf("follow %v: read %v, %v; want a..e then EOF", follow, ids, err)
		}
		hub.mu.Lock()
		cursor := hub.cursor
		hub.mu.Unlock()
		if cursor != 5 {
			t.Errorf("follow %v: the hub's cursor is at %d, want 5: events past the last printed were acked", follow, cursor)
		}
	}
}

// closedURL is a loopback address nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	return url
}

func TestPullFollowGivesUpOnAHubItNeverReached(t *testing.T) {
	c, err := New(closedURL(t), WithToken("tok"))
	if err != nil {
		t.Fatal(err)
	}
	var retries []Retry
	p := c.Pull("", "sub", PullOptions{Follow: true, PollInterval: 10 * time.Millisecond, MaxPollInterval: 50 * time.Millisecond,
		GiveUpAfter: 300 * time.Millisecond, OnRetry: func(r Retry) { retries = append(retries, r) }})
	start := time.Now()
	_, err = p.Next(context.Background())
	var never *NeverReachedError
	var transport *url.Error
	if !errors.As(err, &never) || !errors.As(err, &transport) {
		t.Fatalf("Next = %v, want a NeverReachedError wrapping the transport error", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("gave up after %s, want about 300ms", took)
	}
	if len(retries) == 0 || retries[0].Reached || retries[0].Err == nil || retries[0].Wait <= 0 {
		t.Errorf("retries reported %+v, want each failed read with its wait, unreached", retries)
	}
}

func TestPullFollowKeepsWaitingForAHubThatAnswered(t *testing.T) {
	hub := &pullHub{}
	// 503s for longer than GiveUpAfter: the hub answered, so it is an
	// outage to wait out, not a wrong address.
	for range 8 {
		hub.fail = append(hub.fail, refusal(http.StatusServiceUnavailable, "store_unavailable", ""))
	}
	hub.add("a")
	var retries int
	p := startPullHub(t, hub).Pull("", "sub", PullOptions{Limit: 10, Follow: true, PollInterval: time.Millisecond, MaxPollInterval: 20 * time.Millisecond,
		GiveUpAfter: 50 * time.Millisecond, OnRetry: func(r Retry) {
			retries++
			if !r.Reached {
				t.Errorf("retry %d after an API answer says the hub was not reached", r.Failures)
			}
		}})
	e, err := p.Next(context.Background())
	if err != nil || e.CEID != "a" {
		t.Fatalf("Next = %q, %v; want a after the outage", e.CEID, err)
	}
	if retries != 8 {
		t.Errorf("%d retries reported, want 8", retries)
	}
}
