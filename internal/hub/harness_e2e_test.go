package hub_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/freeport"
	"github.com/hubctl/hubctl/internal/testutil/kafkatest"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/internal/testutil/wait"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	// e2eTenant owns every subscription and event of these tests.
	e2eTenant = "acme"
	// e2eSchemaVersion is what events carry as ce-schemaversion: not the
	// produce default, so an attribute that merely echoed a default would
	// show.
	e2eSchemaVersion = "1.4.2"
	e2eAdminToken    = "e2e-admin-token-0123456789abcdef"
	e2eKEK           = "MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=" // 32 bytes, base64
	// patience bounds every wait on the running hub. A run takes a few
	// seconds; the bound is for a loaded CI machine.
	patience = 30 * time.Second
)

// topicOf is the platform's topic for a midaz event key, the one
// `hubctl events produce` publishes to by default.
func topicOf(eventKey string) string {
	return "lerian.streaming.midaz_" + eventKey
}

// hubSession is one `hubctl serve` on its own database and kfake, driven
// through the CLI as an operator and a tenant would.
type hubSession struct {
	t       *testing.T
	proc    *clitest.Process
	kafka   *kafkatest.Cluster
	brokers string
	// base is the hub's HTTP address, http://host:port.
	base string
	// tenant is the environment of remote mode with the tenant's own API
	// key, the way the tenant's developers use hubctl.
	tenant map[string]string
}

// startHub provisions the tenant on the database, starts `hubctl serve`
// consuming the given event keys' topics with private sinks allowed (every
// destination here is on loopback), waits until it is ready and issues the
// tenant an API key through the admin API.
//
// The tenant is created before serve starts, as an operator provisions one,
// so that the roster ingest loads at start already holds it: a tenant
// created afterwards reaches ingest only at its next roster refresh, and an
// event produced before that would be discarded as unknown_tenant.
func startHub(t *testing.T, eventKeys ...string) *hubSession {
	t.Helper()
	return startHubWith(t, nil, eventKeys...)
}

// startHubWith is startHub with more environment for serve (OTEL_*, …).
func startHubWith(t *testing.T, env map[string]string, eventKeys ...string) *hubSession {
	t.Helper()
	topics := make([]string, len(eventKeys))
	for i, key := range eventKeys {
		topics[i] = topicOf(key)
	}
	kafka := kafkatest.New(t, topics...)
	dsn := pgtest.DSN(t)
	mustRun(t, clitest.Database(dsn), "", "tenants", "create", e2eTenant)

	addr := freeAddr(t)
	serveEnv := map[string]string{
		"STREAMING_HUB_POSTGRES_DSN":           dsn,
		"STREAMING_HUB_KAFKA_BROKERS":          strings.Join(kafka.Brokers(), ","),
		"STREAMING_HUB_KAFKA_METADATA_REFRESH": "1s",
		"STREAMING_HUB_KEK_REF":                "HUB_KEK",
		"HUB_KEK":                              e2eKEK,
		"STREAMING_HUB_ADMIN_TOKEN":            e2eAdminToken,
		"STREAMING_HUB_ALLOW_PRIVATE_SINKS":    "true",
		"STREAMING_HUB_DISPATCH_IDLE_INTERVAL": "50ms",
		"STREAMING_HUB_SHUTDOWN_TIMEOUT":       "10s",
	}
	maps.Copy(serveEnv, env)
	proc := clitest.Start(t, serveEnv, "serve", "--listen", addr)
	t.Cleanup(func() {
		if code := proc.Stop(patience); code != 0 {
			t.Errorf("serve exited %d after SIGTERM:\n%s", code, proc.Stderr())
		}
	})
	base := "http://" + addr
	waitFor(t, "serve to be ready", proc, func() bool { return readyz(base) == http.StatusOK })

	var key hubapi.CreatedAPIKey
	decode(t, mustRun(t, clitest.Remote(base, e2eAdminToken), "", "tenants", "keys", "create", e2eTenant, "--name", "e2e", "-o", "json"), &key)
	return &hubSession{t: t, proc: proc, kafka: kafka, brokers: strings.Join(kafka.Brokers(), ","), base: base, tenant: clitest.Remote(base, key.Key)}
}

// subscribe creates a subscription with `hubctl subs create --from-file -`
// and requires its destination to have passed verification.
func (h *hubSession) subscribe(body map[string]any) hubapi.CreatedSubscription {
	h.t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		h.t.Fatal(err)
	}
	var sub hubapi.CreatedSubscription
	decode(h.t, mustRun(h.t, h.tenant, string(raw), "subs", "create", "--from-file", "-", "-o", "json"), &sub)
	if sub.VerificationState != "active" || !sub.Enabled {
		h.t.Fatalf("subscription %s: verification %s (%s), enabled %v; want active and enabled",
			sub.Name, sub.VerificationState, sub.VerificationError, sub.Enabled)
	}
	return sub
}

// produce publishes one event of the tenant with `hubctl events produce`
// and returns its id.
func (h *hubSession) produce(eventKey, data string, flags ...string) string {
	h.t.Helper()
	args := append([]string{"events", "produce", "--brokers", h.brokers, "--tenant", e2eTenant,
		"--type", eventKey, "--schema-version", e2eSchemaVersion, "--data", data}, flags...)
	return strings.TrimSpace(mustRun(h.t, nil, "", args...))
}

// settled waits until the subscription has n deliveries, none of them
// still pending or in flight, and returns each with its attempts, keyed by
// event id.
func (h *hubSession) settled(sub hubapi.CreatedSubscription, n int) map[string]hubapi.DeliveryDetail {
	h.t.Helper()
	var page hubapi.Page[hubapi.Delivery]
	waitFor(h.t, fmt.Sprintf("%d settled deliveries of subscription %s", n, sub.Name), h.proc, func() bool {
		decode(h.t, mustRun(h.t, h.tenant, "", "subs", "deliveries", sub.ID, "-o", "json"), &page)
		return len(page.Items) == n && !slices.ContainsFunc(page.Items, func(d hubapi.Delivery) bool {
			return d.State == hubapi.DeliveryPending || d.State == hubapi.DeliveryInFlight
		})
	})
	details := make(map[string]hubapi.DeliveryDetail, n)
	for _, d := range page.Items {
		var detail hubapi.DeliveryDetail
		decode(h.t, mustRun(h.t, h.tenant, "", "deliveries", "get", d.ID, "-o", "json"), &detail)
		details[detail.EventID] = detail
	}
	return details
}

// succeeded requires the delivery of eventID to have succeeded at its only
// attempt, and returns that attempt's id: the delivery id the destination
// must have received.
func succeeded(t *testing.T, deliveries map[string]hubapi.DeliveryDetail, eventID, eventKey string) string {
	t.Helper()
	d, ok := deliveries[eventID]
	if !ok {
		t.Fatalf("no delivery of event %s among %d", eventID, len(deliveries))
	}
	if d.State != hubapi.DeliverySucceeded || d.Attempts != 1 || len(d.AttemptHistory) != 1 || d.EventType != eventKey || d.TenantID != e2eTenant {
		t.Fatalf("delivery %+v; want succeeded at its first attempt, event type %s, tenant %s", d, eventKey, e2eTenant)
	}
	a := d.AttemptHistory[0]
	if a.Outcome != hubapi.AttemptSucceeded || a.Error != nil || a.ID == "" {
		t.Fatalf("attempt %+v; want succeeded, no error, an id", a)
	}
	return a.ID
}

// exhausted requires the delivery of eventID to be dead after its only,
// failed attempt, and returns that attempt.
func exhausted(t *testing.T, deliveries map[string]hubapi.DeliveryDetail, eventID string) hubapi.DeliveryAttempt {
	t.Helper()
	d, ok := deliveries[eventID]
	if !ok {
		t.Fatalf("no delivery of event %s among %d", eventID, len(deliveries))
	}
	if d.State != hubapi.DeliveryDead || d.DeadReason == nil || *d.DeadReason != hubapi.DeadExhausted ||
		d.Attempts != 1 || len(d.AttemptHistory) != 1 {
		t.Fatalf("delivery %+v; want dead (exhausted) after one attempt", d)
	}
	a := d.AttemptHistory[0]
	if a.Outcome != hubapi.AttemptFailed || a.Error == nil || *a.Error == "" {
		t.Fatalf("attempt %+v; want failed with an error", a)
	}
	if d.LastError == nil || *d.LastError != *a.Error {
		t.Errorf("delivery last_error %v, want the attempt's error %q", d.LastError, *a.Error)
	}
	return a
}

// noSecrets fails the test when a subscription's reads show any of the
// credentials it was created with (reads show them masked: docs/concepts.md, Subscriptions).
func (h *hubSession) noSecrets(sub hubapi.CreatedSubscription, secrets ...string) {
	h.t.Helper()
	created, err := json.Marshal(sub)
	if err != nil {
		h.t.Fatal(err)
	}
	shown := string(created) + mustRun(h.t, h.tenant, "", "subs", "get", sub.ID, "-o", "json")
	for _, secret := range secrets {
		if strings.Contains(shown, secret) {
			h.t.Errorf("subscription %s shows a credential it was created with:\n%s", sub.Name, shown)
		}
	}
}

// mustRun runs hubctl with env and stdin and returns its standard output,
// failing the test unless it exits 0.
func mustRun(t *testing.T, env map[string]string, stdin string, args ...string) string {
	t.Helper()
	res := clitest.RunWithStdin(t, env, stdin, args...)
	if res.Code != 0 {
		t.Fatalf("hubctl %s exited %d:\n%s%s", strings.Join(args, " "), res.Code, res.Stdout, res.Stderr)
	}
	return res.Stdout
}

func decode(t *testing.T, stdout string, into any) {
	t.Helper()
	if err := json.Unmarshal([]byte(stdout), into); err != nil {
		t.Fatalf("output is not the expected JSON: %v\n%s", err, stdout)
	}
}

// waitFor polls done until it holds, failing the test after patience or
// when the hub process, if given, has exited.
func waitFor(t *testing.T, what string, hub *clitest.Process, done func() bool) {
	t.Helper()
	poll := wait.Poll{Patience: patience, Interval: 50 * time.Millisecond}
	if hub != nil {
		poll.Abort = hub.ExitReport
		poll.Explain = func() string {
			// The polling itself fills the log with request lines.
			var log []string
			for line := range strings.Lines(hub.Stderr()) {
				if !strings.Contains(line, `"msg":"http request"`) {
					log = append(log, line)
				}
			}
			return "serve's log but its request lines:\n" + strings.Join(log[max(len(log)-60, 0):], "")
		}
	}
	poll.Until(t, what, done)
}

func readyz(base string) int {
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// freeAddr is a loopback address with a port nobody listens on now,
// outside the range outgoing connections take theirs from (freeport).
func freeAddr(t *testing.T) string {
	t.Helper()
	ports, err := freeport.Pick(1)
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(ports[0])
}

// subscription is a create body for the tenant's subscriptions to
// eventTypes with the sink object; more adds or replaces fields.
func subscription(name string, sinkObject map[string]any, eventTypes []string, more map[string]any) map[string]any {
	body := map[string]any{"name": name, "sink": sinkObject, "event_types": eventTypes}
	for k, v := range more {
		body[k] = v
	}
	return body
}

// oneAttempt makes a failed delivery dead at its first failure, so the
// failure path settles at once.
var oneAttempt = map[string]any{"retry_schedule": []string{"0s"}}
