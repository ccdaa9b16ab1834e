package ingest

import (
	"crypto/tls"
	"log/slog"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/testutil/syncbuf"
	"github.com/hubctl/hubctl/internal/testutil/testpki"
)

func TestAnyConsumable(t *testing.T) {
	include := regexp.MustCompile(`^lerian\.streaming\..+`)
	exclude := regexp.MustCompile(`\.(commands|dlq)$`)
	cases := []struct {
		name    string
		topics  []string
		exclude *regexp.Regexp
		want    bool
	}{
		{"no topics", nil, exclude, false},
		{"only others", []string{"orders", "payments"}, exclude, false},
		{"only excluded", []string{"lerian.streaming.x.dlq", "lerian.streaming.x.commands"}, exclude, false},
		{"one matching", []string{"orders", "lerian.streaming.x.created"}, exclude, true},
		{"excluded one without an exclusion", []string{"lerian.streaming.x.dlq"}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := anyConsumable(c.topics, include, c.exclude); got != c.want {
				t.Fatalf("anyConsumable(%v) = %v, want %v", c.topics, got, c.want)
			}
		})
	}
}

// TestReadyBeforeAnyTopicMatches: a hub started before its producers
// created their topics has nothing to join and is ready; once a topic
// appears it joins and consumes it, and stays ready.
func TestReadyBeforeAnyTopicMatches(t *testing.T) {
	e := newEnv(t, "unrelated.topic")
	e.addTenants("t-a")
	m := e.start()
	waitFor(t, "ready with no topic to consume", m.Ready)
	if m.joined.Load() {
		t.Fatal("joined a group with no topic to consume; the test no longer covers the empty cluster")
	}

	e.createTopic(testTopic)
	e.produce(cloudEvent(0, "t-a", eventID(1), []byte("{}")))
	e.waitStored(testTopic, 1)
	waitFor(t, "the group joined", m.joined.Load)
	if !m.Ready() {
		t.Fatal("not ready after joining")
	}
}

// TestBrokerProblemStopsReadinessUntilFixed: brokers this hub cannot use (a
// CA file that does not sign their certificate) keep it unready with one
// log line naming the cause and the setting; once the file is fixed,
// ingest joins and stores by itself, without a restart.
func TestBrokerProblemStopsReadinessUntilFixed(t *testing.T) {
	brokersCA := testpki.MustCA(t, "ingest test brokers' CA")
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(testPartitions, testTopic),
		kfake.TLS(brokersCA.ServerConfig(t, []net.IP{net.IPv4(127, 0, 0, 1)})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	testpki.WriteFile(t, caFile, testpki.MustCA(t, "another CA").CertPEM)

	e := newEnv(t)
	e.addTenants("t-a")
	var log syncbuf.Buffer
	m := e.start(func(o *Options) {
		o.Kafka.Brokers = cluster.ListenAddrs()
		o.Kafka.TLSEnabled, o.Kafka.TLSCAFile = true, caFile
		o.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	waitFor(t, "the problem diagnosed", func() bool { return m.BrokerProblem() != nil })
	if problem := m.BrokerProblem(); problem.Setting != "STREAMING_HUB_KAFKA_TLS_CA_FILE" {
		t.Fatalf("problem = %q, want it to name STREAMING_HUB_KAFKA_TLS_CA_FILE", problem)
	}
	if m.Ready() {
		t.Fatal("ready while the brokers cannot be used")
	}

	testpki.WriteFile(t, caFile, brokersCA.CertPEM)
	producer, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...),
		kgo.DialTLSConfig(&tls.Config{RootCAs: brokersCA.Pool(), MinVersion: tls.VersionTLS12}),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	if err := producer.ProduceSync(t.Context(), cloudEvent(0, "t-a", eventID(1), []byte("{}"))).FirstErr(); err != nil {
		t.Fatal(err)
	}
	e.waitStored(testTopic, 1)
	waitFor(t, "ready", m.Ready)
	if m.BrokerProblem() != nil {
		t.Fatalf("a problem is still reported: %s", m.BrokerProblem())
	}
	if got := linesWith(&log, "level=ERROR"); len(got) != 1 || !strings.Contains(got[0], "STREAMING_HUB_KAFKA_TLS_CA_FILE") {
		t.Fatalf("want one ERROR line naming the setting, got %d:\n%s", len(got), strings.Join(got, "\n"))
	}
	if len(linesWith(&log, "reaches the Kafka brokers again")) != 1 {
		t.Fatalf("the recovery was not logged once:\n%s", log.String())
	}
}
