package dev_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/profile"
	"github.com/hubctl/hubctl/pkg/client"
	"github.com/hubctl/hubctl/pkg/hubapi"
	"github.com/hubctl/hubctl/pkg/webhook"
)

var (
	brokersLine  = regexp.MustCompile(`Kafka brokers\s+(\S+)`)
	postgresLine = regexp.MustCompile(`PostgreSQL\s+(postgres://\S+)`)
	exportLine   = regexp.MustCompile(`export HUBCTL_SERVER=(\S+) HUBCTL_TOKEN=(\S+)`)
)

// TestDevRunsTheHubEndToEnd starts `hubctl dev` in-process on free ports,
// uses what its banner prints the way a developer would (a PostgreSQL client
// on the DSN, a Kafka producer on the brokers), and checks that Ctrl-C stops
// it cleanly and that a restart keeps the data.
func TestDevRunsTheHubEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	dataDir := reachableTempDir(t)
	const stopTimeout = 60 * time.Second

	// The profile file already holds the context of a dev instance on the
	// default ports, as a developer's would: this one must leave it alone.
	configDir := t.TempDir()
	firstDev := profile.Context{Name: "dev", Server: "http://127.0.0.1:8080", Token: "first-key", Tenant: "default", Brokers: []string{"127.0.0.1:19092"}}
	seeded := &profile.File{Current: "dev", Contexts: []profile.Context{firstDev}}
	if err := seeded.Save(filepath.Join(configDir, "config.yaml")); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{profile.EnvConfigDir: configDir}
	start := func() (*clitest.Process, string, string) {
		return startDev(t, env, "--data-dir", dataDir, "--kafka-port", "0", "--postgres-port", "0", "--listen", "127.0.0.1:0")
	}

	dev, dsn, brokers := start()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	checkStoredContext(t, dev.Stderr(), configDir, brokers, firstDev)

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to the printed DSN: %v", err)
	}
	var status string
	if err := conn.QueryRow(ctx, `SELECT status FROM tenants WHERE id = 'default'`).Scan(&status); err != nil || status != "active" {
		t.Fatalf("tenant default: status %q, err %v", status, err)
	}

	// The printed server and tenant key work: subscribe a local webhook
	// receiver, which dev mode may reach (private sinks allowed).
	export := exportLine.FindStringSubmatch(dev.Stderr())
	if export == nil {
		t.Fatalf("banner lacks the HUBCTL_SERVER/HUBCTL_TOKEN line:\n%s", dev.Stderr())
	}
	// The banner's portal link signs tenant default in.
	portalLink := regexp.MustCompile(`portal +(` + regexp.QuoteMeta(export[1]) + `/portal/sign-in\?token=hpl_\S+)`).FindStringSubmatch(dev.Stderr())
	if portalLink == nil {
		t.Errorf("banner lacks a portal link on the printed server:\n%s", dev.Stderr())
	} else if resp, err := http.Get(portalLink[1]); err != nil {
		t.Errorf("open the banner's portal link: %v", err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Set-Cookie"), "hubctl_portal=hps_") {
			t.Errorf("the banner's portal link answered %d, cookie %q", resp.StatusCode, resp.Header.Get("Set-Cookie"))
		}
	}
	deliveries := make(chan *http.Request, 16)
	bodies := make(chan []byte, 16)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get(webhook.HeaderEventType) != webhook.VerificationEventType {
			deliveries <- r
			bodies <- body
		}
	}))
	defer receiver.Close()
	hub, err := client.New(export[1], client.WithToken(export[2]))
	if err != nil {
		t.Fatal(err)
	}
	created, err := hub.CreateSubscription(ctx, "", hubapi.SubscriptionCreate{
		Name:       "dev smoke test",
		Sink:       json.RawMessage(`{"type":"webhook","url":"` + receiver.URL + `"}`),
		EventTypes: []string{"transaction.*"},
	})
	if err != nil {
		t.Fatalf("create a subscription with the printed tenant key: %v", err)
	}
	if created.VerificationState != "active" {
		t.Fatalf("subscription not verified: %+v", created.Subscription)
	}

	producer, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	rec := &kgo.Record{
		Topic: "lerian.streaming.midaz_transaction.posted",
		Value: []byte(`{"amount":1000}`),
		Headers: []kgo.RecordHeader{
			{Key: "ce-specversion", Value: []byte("1.0")},
			{Key: "ce-id", Value: []byte("0190b6a2-7c1e-7d3a-9f00-123456789abc")},
			{Key: "ce-source", Value: []byte("midaz")},
			{Key: "ce-type", Value: []byte("studio.lerian.midaz.transaction.posted")},
			{Key: "ce-time", Value: []byte("2026-11-29T12:00:00Z")},
			{Key: "ce-schemaversion", Value: []byte("1.0.0")},
			{Key: "ce-resourcetype", Value: []byte("transaction")},
			{Key: "ce-eventtype", Value: []byte("posted")},
			{Key: "ce-tenantid", Value: []byte("default")},
		},
	}
	if err := producer.ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatalf("produce to the printed brokers: %v", err)
	}
	producer.Close()

	var key string
	for {
		err := conn.QueryRow(ctx, `SELECT event_key FROM events WHERE tenant_id = 'default' AND source <> 'hubctl'`).Scan(&key)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the event never reached the inbox: %v\n%s", err, dev.Stderr())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if key != "transaction.posted" {
		t.Errorf("event key = %q", key)
	}
	select {
	case r := <-deliveries:
		body := <-bodies
		if string(body) != `{"amount":1000}` {
			t.Errorf("delivered body %q", body)
		}
		if err := webhook.VerifyRequest(r, body, []string{created.SigningSecret}, time.Now(), webhook.DefaultTolerance); err != nil {
			t.Errorf("delivery signature: %v", err)
		}
	case <-ctx.Done():
		t.Fatalf("the event never reached the webhook:\n%s", dev.Stderr())
	}
	conn.Close(ctx)

	if code := dev.Stop(stopTimeout); code != 0 {
		t.Fatalf("dev exited %d after Ctrl-C:\n%s", code, dev.Stderr())
	}
	if _, err := os.Stat(filepath.Join(dataDir, "postgres", "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("PostgreSQL still running (postmaster.pid present) after dev stopped: %v", err)
	}

	// A restart on the same data dir keeps the inbox.
	dev, dsn, _ = start()
	defer dev.Stop(stopTimeout)
	conn, err = pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	// The hub's own operational events (source hubctl) aside.
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM events WHERE source <> 'hubctl'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("after restart: %d events, err %v; want the 1 from before", n, err)
	}
}

// checkStoredContext checks that a dev instance on a port picked at start
// stored a context of its own named after that port, carrying the API
// address and key its banner printed, tenant default and its brokers; that
// the banner names it; and that the first instance's context is untouched
// and still current.
func checkStoredContext(t *testing.T, banner, configDir, brokers string, first profile.Context) {
	t.Helper()
	_, port, err := net.SplitHostPort(strings.Split(brokers, ",")[0])
	if err != nil {
		t.Fatalf("printed brokers %q: %v", brokers, err)
	}
	name := "dev-" + port
	if want := `Context "` + name + `" stored`; !strings.Contains(banner, want) || !strings.Contains(banner, "hubctl context use "+name) {
		t.Errorf("banner does not name the context %s it stored:\n%s", name, banner)
	}
	file, err := profile.Load(filepath.Join(configDir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	export := exportLine.FindStringSubmatch(banner)
	if export == nil {
		t.Fatalf("banner lacks the HUBCTL_SERVER/HUBCTL_TOKEN line:\n%s", banner)
	}
	c, ok := file.Get(name)
	if !ok || c.Server != export[1] || c.Token != export[2] || c.Tenant != "default" || strings.Join(c.Brokers, ",") != brokers {
		t.Errorf("context %s = %+v (stored %v); want server %s, the printed key, tenant default, brokers %s", name, c, ok, export[1], brokers)
	}
	got, _ := file.Get("dev")
	if file.Current != "dev" || got.Server != first.Server || got.Token != first.Token || strings.Join(got.Brokers, ",") != strings.Join(first.Brokers, ",") {
		t.Errorf("the first instance's context: current %q, dev %+v; want it untouched and current", file.Current, got)
	}
}

// reachableTempDir is a temp dir the postgres OS user can enter: when the
// test runs as root, PostgreSQL runs as that user, and Go's temp dirs are
// private to their creator.
func reachableTempDir(t *testing.T) string {
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "dev")
}
