package dev_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/freeport"
)

// TestSecondDevOnBusyPortsTouchesNothing: with one `hubctl dev` running (a
// static group member), a second one (its own data dir) given any of the
// first one's ports stops with one line naming the port and the flag that
// moves it, and writes nothing to the first one's database.
func TestSecondDevOnBusyPortsTouchesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	picked, err := freeport.Pick(3, 5432)
	if err != nil {
		t.Fatal(err)
	}
	pgPort, kafkaPort, apiPort := strconv.Itoa(picked[0]), strconv.Itoa(picked[1]), strconv.Itoa(picked[2])
	first, dsn, brokers := startDev(t, nil, "--data-dir", reachableTempDir(t),
		"--postgres-port", pgPort, "--kafka-port", kafkaPort, "--listen", "127.0.0.1:"+apiPort)
	defer first.Stop(60 * time.Second)
	assertStaticMember(t, brokers)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	state := func() string {
		var keys, databases int
		if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM tenant_api_keys), (SELECT count(*) FROM pg_database)`).Scan(&keys, &databases); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d API keys, %d databases", keys, databases)
	}
	before := state()

	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"postgres", []string{"--postgres-port", pgPort, "--kafka-port", "0", "--listen", "127.0.0.1:0"},
			"PostgreSQL port " + pgPort + " is already in use (another hubctl dev?): choose another with --postgres-port"},
		{"kafka", []string{"--postgres-port", "0", "--kafka-port", kafkaPort, "--listen", "127.0.0.1:0"},
			"Kafka port " + kafkaPort + " is already in use (another hubctl dev?): choose another with --kafka-port"},
		{"api", []string{"--postgres-port", "0", "--kafka-port", "0", "--listen", "127.0.0.1:" + apiPort},
			"HTTP API address 127.0.0.1:" + apiPort + " is already in use (another hubctl dev?): choose another with --listen"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			second := clitest.Run(t, nil, append([]string{"dev", "--data-dir", reachableTempDir(t)}, tt.args...)...)
			lines := strings.Split(strings.TrimSpace(second.Stderr), "\n")
			if second.Code == 0 || len(lines) != 1 || lines[0] != "Error: "+tt.want {
				t.Fatalf("second dev exited %d with:\n%s\nwant one line: Error: %s", second.Code, second.Stderr, tt.want)
			}
		})
	}
	if after := state(); after != before {
		t.Errorf("the first dev's cluster went from %s to %s", before, after)
	}
	if code, exited := first.Exited(); exited {
		t.Errorf("the first dev exited with %d:\n%s", code, first.Stderr())
	}
}

// assertStaticMember checks that dev mode's hub is in its Kafka group as
// the static member hubctl-dev, so a restart takes its partitions back at
// once.
func assertStaticMember(t *testing.T, brokers string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// The hub joins its group once a topic matches its pattern: make one.
	rec := &kgo.Record{Topic: "lerian.streaming.midaz_transaction.posted", Value: []byte("{}")}
	if err := cl.ProduceSync(t.Context(), rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Groups = []string{"streaming-hub"}
		resp, err := req.RequestWith(t.Context(), cl)
		if err == nil && len(resp.Groups) == 1 && len(resp.Groups[0].Members) == 1 {
			if id := resp.Groups[0].Members[0].InstanceID; id == nil || *id != "hubctl-dev" {
				t.Fatalf("dev's group member has instance id %v, want hubctl-dev", id)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("dev's consumer group has no single member within 30s: %v %+v", err, resp)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
