package portal_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"github.com/hubctl/hubctl/internal/testutil/wait"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/testutil/kafkatest"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/pkg/hubapi"
	"github.com/hubctl/hubctl/pkg/webhook"
)

// The browser tests drive Debian's Chromium headless with chromedp against
// `hubctl serve` on PostgreSQL and kfake, as a tenant's people would use
// the portal, and run axe-core on every page they open.

const (
	chromiumPath = "/usr/bin/chromium"
	// axeVersion is the pinned axe-core the tests inject; npm fetches it
	// once into the user's cache directory.
	axeVersion       = "4.10.3"
	browserAdmin     = "browser-admin-token-0123456789abcdef"
	browserPatience  = 60 * time.Second
	browserEventType = "transaction.posted"
)

// needTool skips outside CI when a tool is missing, saying how to install
// it, and fails under CI, where .ci/run installs it.
func needTool(t *testing.T, path, install string) {
	t.Helper()
	if _, err := exec.LookPath(path); err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing: %s", path, install)
	}
	t.Skipf("%s is missing, so the portal's browser tests are skipped: %s", path, install)
}

// axeSource is axe-core's script, from the cache or fetched by npm pack.
func axeSource(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "hubctl-test", "axe-core-"+axeVersion)
	script := filepath.Join(dir, "axe.min.js")
	if b, err := os.ReadFile(script); err == nil {
		return string(b)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("npm", "pack", "--silent", "axe-core@"+axeVersion, "--pack-destination", dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("npm pack axe-core@%s: %v", axeVersion, err)
	}
	tarball := filepath.Join(dir, strings.TrimSpace(string(out)))
	src, err := extract(tarball, "package/axe.min.js")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return string(src)
}

func extract(tarball, name string) ([]byte, error) {
	f, err := os.Open(tarball)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, fmt.Errorf("%s has no %s: %w", tarball, name, err)
		}
		if h.Name == name {
			return io.ReadAll(tr)
		}
	}
}

// served is `hubctl serve` on its own database and kfake.
type served struct {
	base    string
	brokers string
	admin   map[string]string
}

func serve(t *testing.T) *served {
	t.Helper()
	kafka := kafkatest.New(t, "lerian.streaming.midaz_"+browserEventType)
	dsn := pgtest.DSN(t)
	for _, tenant := range []string{"acme", "globex"} {
		if r := clitest.Run(t, clitest.Database(dsn), "tenants", "create", tenant); r.Code != 0 {
			t.Fatalf("tenants create %s: %s", tenant, r.Stderr)
		}
	}
	addr := loopbackAddr(t)
	base := "http://" + addr
	proc := clitest.Start(t, map[string]string{
		"STREAMING_HUB_POSTGRES_DSN":           dsn,
		"STREAMING_HUB_KAFKA_BROKERS":          strings.Join(kafka.Brokers(), ","),
		"STREAMING_HUB_KAFKA_METADATA_REFRESH": "1s",
		"STREAMING_HUB_KEK_REF":                "HUB_KEK",
		"HUB_KEK":                              testKEK,
		"STREAMING_HUB_ADMIN_TOKEN":            browserAdmin,
		"STREAMING_HUB_ALLOW_PRIVATE_SINKS":    "true",
		"STREAMING_HUB_DISPATCH_IDLE_INTERVAL": "50ms",
		"STREAMING_HUB_SHUTDOWN_TIMEOUT":       "10s",
		"STREAMING_HUB_PUBLIC_URL":             base,
	}, "serve", "--listen", addr)
	t.Cleanup(func() { proc.Stop(browserPatience) })
	wait.Poll{Patience: browserPatience, Explain: proc.Stderr}.Until(t, "serve to be ready", func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return &served{base: base, brokers: strings.Join(kafka.Brokers(), ","), admin: clitest.Remote(base, browserAdmin)}
}

// loopbackAddr is a loopback address nothing listens on now.
func loopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func (s *served) link(t *testing.T, args ...string) string {
	t.Helper()
	r := clitest.Run(t, s.admin, append([]string{"portal", "-o", "json"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("hubctl portal %v: %s", args, r.Stderr)
	}
	var link hubapi.PortalLink
	if err := json.Unmarshal([]byte(r.Stdout), &link); err != nil {
		t.Fatal(err)
	}
	return link.URL
}

func (s *served) produce(t *testing.T, tenant string) {
	t.Helper()
	r := clitest.Run(t, nil, "events", "produce", "--brokers", s.brokers, "--tenant", tenant, "--type", browserEventType, "--data", `{"amount":1000}`)
	if r.Code != 0 {
		t.Fatalf("events produce: %s", r.Stderr)
	}
}

// receiver is a webhook destination that answers 200, or 503 with a body
// of its own while failing.
type receiver struct {
	*httptest.Server
	failing atomic.Bool
}

const receiverComplaint = "receiver says no: disk full"

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		if r.failing.Load() && req.Header.Get(webhook.HeaderEventType) != webhook.VerificationEventType {
			http.Error(w, receiverComplaint, http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.Close)
	return r
}

// page is the browser, with the checks every page gets.
type page struct {
	t       *testing.T
	ctx     context.Context
	axe     string
	shots   string
	checked map[string]bool
}

// within runs fn with a context bounded by the tests' patience.
func (p *page) within(fn func(ctx context.Context) error) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, browserPatience)
	defer cancel()
	if err := fn(ctx); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

func (p *page) do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	p.within(func(ctx context.Context) error { return chromedp.Do(ctx, steps...) })
}

func (p *page) text(selector string) string {
	p.t.Helper()
	return value(p, chromedp.Text(chromedp.CSS(selector)))
}

// value runs an action that answers a value.
func value[T any](p *page, a chromedp.Action[T]) T {
	p.t.Helper()
	var v T
	p.within(func(ctx context.Context) (err error) {
		v, err = chromedp.Run(ctx, a)
		return err
	})
	return v
}

// open navigates and waits for the page's heading.
func (p *page) open(url string) {
	p.t.Helper()
	p.do(chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("h1")))
}

// click follows a link or button and waits for the next page's heading.
func (p *page) click(selector, waitFor string) {
	p.t.Helper()
	p.do(chromedp.Click(chromedp.CSS(selector)), chromedp.WaitVisible(chromedp.CSS(waitFor)))
}

// waitText waits, without reloading, until the element selector picks
// holds want: for a page that changes by itself.
func (p *page) waitText(selector, want string) {
	p.t.Helper()
	quoted, err := json.Marshal(selector)
	if err != nil {
		p.t.Fatal(err)
	}
	read := `(document.querySelector(` + string(quoted) + `) || {innerText: ""}).innerText`
	wait.Poll{Patience: browserPatience, Interval: 100 * time.Millisecond, Explain: func() string { return p.text("main") }}.
		Until(p.t, fmt.Sprintf("%s to show %q", selector, want), func() bool {
			return strings.Contains(value(p, chromedp.Evaluate[string](read)), want)
		})
}

// until reloads the page until the element selector picks holds want.
func (p *page) until(url, selector, want string) {
	p.t.Helper()
	quoted, err := json.Marshal(selector)
	if err != nil {
		p.t.Fatal(err)
	}
	read := `(document.querySelector(` + string(quoted) + `) || {innerText: ""}).innerText`
	wait.Poll{Patience: browserPatience, Interval: 100 * time.Millisecond, Explain: func() string { return p.text("main") }}.
		Until(p.t, fmt.Sprintf("%s to show %q in %s", url, want, selector), func() bool {
			p.open(url)
			return strings.Contains(value(p, chromedp.Evaluate[string](read)), want)
		})
}

type axeResult struct {
	Violations []struct {
		ID     string `json:"id"`
		Impact string `json:"impact"`
		Help   string `json:"help"`
		Nodes  []struct {
			Target []any `json:"target"`
		} `json:"nodes"`
	} `json:"violations"`
}

// audit runs axe-core on the page once per name and fails on any serious
// or critical violation; it also takes the page's screenshots at desktop
// and phone widths.
func (p *page) audit(name string) {
	p.t.Helper()
	if p.checked[name] {
		return
	}
	p.checked[name] = true
	value(p, chromedp.Evaluate[any](p.axe))
	raw := value(p, chromedp.Evaluate[string](`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r))`, chromedp.EvalAwaitPromise))
	var res axeResult
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		p.t.Fatal(err)
	}
	for _, v := range res.Violations {
		if v.Impact == "serious" || v.Impact == "critical" {
			p.t.Errorf("axe on the %s page: %s (%s): %s, at %v", name, v.ID, v.Impact, v.Help, v.Nodes)
		}
	}
	for _, width := range []int64{1280, 360} {
		p.do(chromedp.EmulateViewport(width, 800))
		shot := value(p, chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(p.shots, fmt.Sprintf("%s-%d.png", name, width)), shot, 0o644); err != nil {
			p.t.Fatal(err)
		}
	}
	p.do(chromedp.EmulateReset())
}

// signIn starts afresh, as another browser would: no cookie of an
// earlier session.
func (p *page) signIn(link string) {
	p.t.Helper()
	p.clearCookies()
	p.open(link)
	p.do(chromedp.WaitVisible(chromedp.CSS(`form[action="/portal/sign-out"]`)))
}

func (p *page) clearCookies() {
	p.t.Helper()
	p.within(func(ctx context.Context) error {
		_, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{})
		return err
	})
}

func startBrowser(t *testing.T) *page {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless, chromedp.NoSandbox,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-gpu", true), chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 800),
	}
	allocator, cancelAllocator := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAllocator)
	ctx, cancel := chromedp.NewContext(allocator)
	t.Cleanup(cancel)
	// The first run starts the browser, which lives as long as its
	// context: it gets no timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", chromiumPath, err)
	}
	shots := filepath.Join(os.TempDir(), "hubctl-portal-screenshots")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("portal screenshots in %s", shots)
	return &page{t: t, ctx: ctx, axe: axeSource(t), shots: shots, checked: map[string]bool{}}
}

// TestPortalInABrowser walks the portal as a tenant's people would, in
// one browser for the whole walk.
func TestPortalInABrowser(t *testing.T) {
	needTool(t, chromiumPath, "apt-get install -y chromium")
	needTool(t, "npm", "apt-get install -y npm (it fetches the pinned axe-core)")
	hub := serve(t)
	p := startBrowser(t)
	dest := newReceiver(t)

	// Sign in by link; the token leaves the address bar.
	link := hub.link(t, "--tenant", "acme")
	p.signIn(link)
	if location := value(p, chromedp.Location()); location != hub.base+"/portal/" {
		t.Errorf("after sign-in the address is %s, want the portal without the token", location)
	}
	p.audit("subscriptions-empty")

	// Create a webhook subscription against the local receiver; a single
	// attempt, so a failure is a dead letter at once.
	p.click(`a[href="/portal/subscriptions/new"]`, `a[href="/portal/subscriptions/new?type=webhook"]`)
	p.audit("subscription-types")
	p.click(`a[href="/portal/subscriptions/new?type=webhook"]`, "#name")
	p.audit("subscription-new")
	p.do(
		chromedp.SendKeys(chromedp.CSS("#name"), "orders"),
		chromedp.SendKeys(chromedp.CSS("#sink-url"), dest.URL),
		chromedp.SetValue(chromedp.CSS("#event_types"), "transaction.*"),
		chromedp.SendKeys(chromedp.CSS("#retry_schedule"), "0s"),
		chromedp.Submit(chromedp.CSS("#name")),
		chromedp.WaitVisible(chromedp.CSS("#secret-value")),
	)
	if secret := p.text("#secret-value"); !strings.HasPrefix(secret, "whsec_") {
		t.Errorf("the created subscription's secret shows as %q", secret)
	}
	p.audit("secret")
	subURL := hub.base + value(p, chromedp.AttributeValue(chromedp.CSS(`main p a`), "href")).Value

	// Events are delivered, and show so: as they happen in the live
	// tail, and in the list.
	p.open(subURL + "/live")
	p.audit("live")
	hub.produce(t, "acme")
	p.waitText("#live-rows", "succeeded")
	p.until(subURL+"/deliveries", "main table", "succeeded")
	p.audit("deliveries")
	// The form narrows the list to when deliveries were created, without
	// a script, and says why when it cannot read a time.
	p.do(chromedp.SetValue(chromedp.CSS("#until"), "1h"), chromedp.Submit(chromedp.CSS("#until")), chromedp.WaitVisible(chromedp.CSS(".empty")))
	if got := p.text(".empty"); !strings.Contains(got, "created in that window") {
		t.Errorf("deliveries until an hour ago: %q", got)
	}
	p.open(subURL + "/deliveries")
	p.do(chromedp.SetValue(chromedp.CSS("#since"), "yesterday"),
		chromedp.Submit(chromedp.CSS("#since")), chromedp.WaitVisible(chromedp.CSS(`[role="alert"]`)))
	if got := p.text(`[role="alert"]`); !strings.Contains(got, `since "yesterday"`) {
		t.Errorf("a window that is not a time: %q", got)
	}
	p.audit("deliveries-window-refused")
	p.do(chromedp.SetValue(chromedp.CSS("#since"), "1h"), chromedp.Submit(chromedp.CSS("#since")), chromedp.WaitVisible(chromedp.CSS("main table")))
	if got := p.text("main table"); !strings.Contains(got, "succeeded") {
		t.Errorf("deliveries since an hour ago: %q", got)
	}
	p.audit("deliveries-window")
	p.open(hub.base + "/portal/")
	if got := p.text("main table"); !strings.Contains(got, "1 delivered") {
		t.Errorf("the subscription list's last day: %q", got)
	}
	p.audit("subscriptions")
	p.open(subURL)
	// The one delivery's attempt shows in the latency chart, and in its
	// table for those who do not see the chart.
	if got := p.text(`figure:has(svg[aria-labelledby="latency-title"]) figcaption`); !strings.Contains(got, "In the last 24 hours: 1 attempt;") {
		t.Errorf("the latency chart says %q", got)
	}
	p.do(chromedp.Click(chromedp.CSS("details.latency-table summary")), chromedp.WaitVisible(chromedp.CSS("details.latency-table table")))
	if got := p.text("details.latency-table tbody"); !regexp.MustCompile(`\t1\t\d+\t\d+`).MatchString(got) {
		t.Errorf("the latency table has no hour with the attempt:\n%q", got)
	}
	p.audit("subscription")

	// A filter is tried on the tenant's recent events before it is saved:
	// the one produced, and the hub's own hub.subscription_created about
	// the subscription made above (docs/operational-events.md), which the
	// filter does not match.
	for i, try := range []struct{ filter, want string }{
		{"data.amount > 500", "1 of the tenant's last 2 events would have matched"},
		{"data.amount > 5000", "0 of the tenant's last 2 events would have matched"},
		{"data.amount >", "The filter does not compile"},
	} {
		// Each try starts from the subscription's page, which shows no
		// result yet, so the result waited for is this try's.
		if i > 0 {
			p.open(subURL)
		}
		p.do(chromedp.SetValue(chromedp.CSS("#try-filter"), try.filter),
			chromedp.Click(chromedp.CSS(`form[action$="/filter-test"] button`)),
			chromedp.WaitVisible(chromedp.CSS("#trial-result")))
		if got := p.text("#trial-result"); !strings.Contains(got, try.want) {
			t.Errorf("filter %q tried: %q, want %q", try.filter, got, try.want)
		}
	}
	p.audit("filter-test")

	// The receiver fails: the failed delivery shows what it answered.
	dest.failing.Store(true)
	hub.produce(t, "acme")
	p.until(subURL+"/deliveries?state=dead", "main table", "503")
	p.click(`tbody a[href^="/portal/deliveries/"]`, "pre.body")
	if body := p.text("pre.body"); !strings.Contains(body, receiverComplaint) {
		t.Errorf("the failed attempt's response body shows %q, want the receiver's %q", body, receiverComplaint)
	}
	p.audit("delivery")

	// Replay the dead letter, counted first, once the receiver works again.
	dest.failing.Store(false)
	p.open(hub.base + "/portal/dead-letters")
	p.audit("dead-letters")
	p.click(`form[action="/portal/dead-letters/replay"] button`, "#replay-count")
	if got := p.text("main"); !strings.Contains(got, "1 dead letter would be sent again") {
		t.Fatalf("the replay's dry run shows:\n%s", got)
	}
	p.audit("replay")
	p.click(`form[action="/portal/dead-letters/replay"] button`, `[role="status"]`)
	if got := p.text(`[role="status"]`); !strings.Contains(got, "Replayed 1 of 1") {
		t.Errorf("the replay shows %q", got)
	}
	p.until(subURL+"/deliveries?state=dead", ".empty", "No deliveries in state dead")

	// Rotate the secret: the new one is shown once.
	p.open(subURL)
	p.click(`form[action$="/rotate-secret"] button`, "#secret-value")
	if secret := p.text("#secret-value"); !strings.HasPrefix(secret, "whsec_") {
		t.Errorf("the rotated secret shows as %q", secret)
	}

	// Recover since an hour ago: everything was delivered, so the count
	// says nothing is missing.
	p.open(subURL)
	p.do(chromedp.SetValue(chromedp.CSS("#since"), time.Now().UTC().Add(-time.Hour).Format("2006-01-02T15:04")),
		chromedp.Click(chromedp.CSS(`form[action$="/recover"] button`)),
		chromedp.WaitVisible(chromedp.CSS("#recover-count")))
	if got := p.text("#recover-count"); !strings.HasPrefix(got, "0 events since") {
		t.Errorf("recover's count shows %q, want 0 events missed", got)
	}
	p.audit("recover")

	// Events and an event with its deliveries.
	p.open(hub.base + "/portal/events")
	p.audit("events")
	p.click(`tbody a[href^="/portal/events/"]`, "h2")
	p.audit("event")

	// Tenant acme cannot reach globex's subscription by editing the URL:
	// it answers exactly as a missing one.
	globex := clitest.Run(t, hub.admin, "subs", "create", "--tenant", "globex", "--name", "globex feed", "--type", "pull", "-o", "json")
	var other hubapi.CreatedSubscription
	if err := json.Unmarshal([]byte(globex.Stdout), &other); err != nil {
		t.Fatalf("subs create for globex: %v\n%s", err, globex.Stderr)
	}
	p.open(hub.base + "/portal/subscriptions/" + other.ID)
	otherText := strings.ReplaceAll(p.text("main"), other.ID, "ID")
	const missing = "01a22ee5-dfa6-7445-9895-d5a93ef514a0"
	p.open(hub.base + "/portal/subscriptions/" + missing)
	if missingText := strings.ReplaceAll(p.text("main"), missing, "ID"); otherText != missingText || !strings.Contains(otherText, "Not found") {
		t.Errorf("globex's subscription shows %q, a missing one %q", otherText, missingText)
	}
	p.audit("not-found")

	// The link was spent; an expired one is refused alike.
	p.clearCookies()
	p.open(link)
	if got := p.text("h1"); got != "This sign-in link is not valid" {
		t.Errorf("the spent link shows %q", got)
	}
	p.audit("link-refused")
	p.open(hub.link(t, "--tenant", "acme", "--ttl", "1us"))
	if got := p.text("h1"); got != "This sign-in link is not valid" {
		t.Errorf("the expired link shows %q", got)
	}

	// A read-only session finds no button that changes anything, and is
	// refused when it posts anyway.
	p.signIn(hub.link(t, "--tenant", "acme", "--read-only"))
	p.open(subURL)
	if changing := value(p, chromedp.Evaluate[int](`document.querySelectorAll('form[method="post"]:not([action="/portal/sign-out"])').length`)); changing != 0 {
		t.Errorf("a read-only session's subscription page has %d forms that change something", changing)
	}
	status := value(p, chromedp.Evaluate[int](`(() => {
		const csrf = document.querySelector('input[name="csrf"]').value;
		return fetch(location.pathname + "/disable", {method: "POST", body: new URLSearchParams({csrf})}).then(r => r.status);
	})()`, chromedp.EvalAwaitPromise))
	if status != http.StatusForbidden {
		t.Errorf("a read-only session's posted disable answered %d, want 403", status)
	}

	// The operator console: tenants, a tenant's keys, a portal link for a
	// tenant, the quarantine, storage and a prune's dry run.
	p.signIn(hub.link(t))
	p.audit("console")
	p.click(`form[action="/portal/console/tenants/acme/portal-link"] button`, "#link-value")
	if got := p.text("#link-value"); !strings.HasPrefix(got, hub.base+"/portal/sign-in?token=hpl_") {
		t.Errorf("the console's link for acme shows %q", got)
	}
	p.open(hub.base + "/portal/console/tenants/acme/keys")
	p.do(chromedp.SendKeys(chromedp.CSS("#key-name"), "ci"), chromedp.Submit(chromedp.CSS("#key-name")),
		chromedp.WaitVisible(chromedp.CSS("#key-value")))
	if got := p.text("#key-value"); !strings.HasPrefix(got, "hub_") {
		t.Errorf("the issued key shows as %q", got)
	}
	p.audit("keys")
	p.open(hub.base + "/portal/console/quarantine")
	p.audit("quarantine")
	p.open(hub.base + "/portal/console/storage")
	p.click(`form[action="/portal/console/storage/prune"] button`, "#prune-result")
	p.audit("storage")
}
