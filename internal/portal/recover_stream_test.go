package portal_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/portal"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// heldRecover is the hub with a recover that reports a quarter done and
// then waits for release before it runs for real.
type heldRecover struct {
	portal.Sessions
	release chan struct{}
	// fail, when set, is how the recover ends once released.
	fail error
}

func (s heldRecover) As(c hubapi.Caller) hubapi.ControlPlane {
	return heldRecoverPlane{ControlPlane: s.Sessions.As(c), release: s.release, fail: s.fail}
}

type heldRecoverPlane struct {
	hubapi.ControlPlane
	release chan struct{}
	fail    error
}

func (p heldRecoverPlane) RecoverSubscription(ctx context.Context, tenant, id string, in hubapi.SubscriptionRecover, progress func(done, total int64)) (hubapi.SubscriptionRecoverResult, error) {
	progress(1, 4)
	select {
	case <-p.release:
	case <-ctx.Done():
		return hubapi.SubscriptionRecoverResult{}, ctx.Err()
	}
	if p.fail != nil {
		return hubapi.SubscriptionRecoverResult{}, p.fail
	}
	return p.ControlPlane.RecoverSubscription(ctx, tenant, id, in, progress)
}

func TestALongRecoverStreamsItsProgress(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail error
		want string
	}{
		{"it ends", nil, " since 2026-01-01T00:00:00Z match it"},
		// The hub's own failure is not shown, as on every page.
		{"it fails", errors.New("connection refused to 10.0.0.7"), `<p class="field-error" role="alert"><strong>The recover stopped: Something went wrong on the hub.`},
	} {
		t.Run(tc.name, func(t *testing.T) { recoverStreams(t, tc.fail, tc.want) })
	}
}

func recoverStreams(t *testing.T, fail error, want string) {
	h := startHub(t)
	receiver := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(receiver.Close)
	sub, err := h.control.As(hubapi.Admin()).CreateSubscription(context.Background(), "acme", hubapi.SubscriptionCreate{Name: "orders",
		Sink: []byte(`{"type":"webhook","url":"` + receiver.URL + `"}`), EventTypes: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	srv := httptest.NewServer(portal.New(portal.Options{Sessions: heldRecover{Sessions: h.control, release: release, fail: fail}, RecoverStreamAfter: time.Millisecond}))
	t.Cleanup(srv.Close)
	link, err := url.Parse(h.link("acme", false))
	if err != nil {
		t.Fatal(err)
	}
	c := browser(t)
	get(t, c, srv.URL+link.RequestURI())
	subURL := srv.URL + "/portal/subscriptions/" + sub.ID
	csrf := csrfOf(t, get(t, c, subURL))

	resp, err := c.PostForm(subURL+"/recover", url.Values{"csrf": {csrf}, "since": {"2026-01-01T00:00:00Z"}, "dry_run": {"true"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("recover answered %d", resp.StatusCode)
	}
	// The page arrives while the recover runs: the quarter it reported
	// is there before the recover may end.
	body := bufio.NewReader(resp.Body)
	var head strings.Builder
	for !strings.Contains(head.String(), "25% of the range read") {
		line, err := body.ReadString('\n')
		if err != nil {
			t.Fatalf("the page ended before the progress: %v\n%s", err, head.String())
		}
		head.WriteString(line)
	}
	if strings.Contains(head.String(), "match it") {
		t.Fatalf("the result shows before the recover ended:\n%s", head.String())
	}
	close(release)
	rest, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	page := head.String() + string(rest)
	if strings.Contains(page, "10.0.0.7") {
		t.Errorf("the hub's failure shows:\n%s", page)
	}
	if fail == nil && !strings.Contains(page, "100% of the range read") || !strings.Contains(page, want) || !strings.HasSuffix(strings.TrimSpace(page), "</html>") {
		t.Errorf("the streamed page:\n%s", page)
	}
}
