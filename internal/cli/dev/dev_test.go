package dev_test

import (
	"context"
	"encoding/json"
	"io"
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

	start := func() (*clitest.Process, string, string) {
		return startDev(t, "--data-dir", dataDir, "--kafka-port", "0", "--postgres-port", "0", "--listen", "127.0.0.1:0")
	}

	dev, dsn, brokers := start()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

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
	created, err := hub.CreateSubscription(ctx, hubapi.SubscriptionCreate{
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
		err := conn.QueryRow(ctx, `SELECT event_key FROM events WHERE tenant_id = 'default'`).Scan(&key)
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
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&n); err != nil || n != 1 {
		t.Errorf("after restart: %d events, err %v; want the 1 from before", n, err)
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
