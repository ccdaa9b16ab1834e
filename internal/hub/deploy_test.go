package hub

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/store"
)

// descRecorder is a Registerer that keeps the names of the metrics
// registered on it, labelled or not, observed or not (Gather would list
// only vectors that have a series).
type descRecorder struct{ names map[string]bool }

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *descRecorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc, 64)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			r.names[m[1]] = true
		}
	}
	return nil
}

func (r *descRecorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *descRecorder) Unregister(prometheus.Collector) bool { return false }

// registeredMetrics builds the hub's parts as Run does, on a recorder.
func registeredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	rec := &descRecorder{names: map[string]bool{}}
	cfg := &config.Config{Kafka: config.KafkaConfig{
		Brokers: []string{"127.0.0.1:9"}, Group: "deploy-test", Topics: regexp.MustCompile(`^lerian\.streaming\..+`), MetadataRefresh: time.Second,
	}}
	st := store.New(nil) // every concern, over no pool: nothing here queries
	log := slog.New(slog.DiscardHandler)
	consumer, err := newIngest(cfg, st, log, rec, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	consumer.Close()
	dispatcher, err := newDispatch(cfg, st, service.NewSubscriptions(st.Catalog, st.Queue, st.OnCall, nil, nil, service.SubscriptionOptions{}), log, rec, nil, "deploy-test")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Role, cfg.Retention.Interval = config.RoleAll, time.Minute
	if _, err := newMaintenance(cfg, st, log, rec, prometheus.NewRegistry(), "deploy-test", dispatcher); err != nil {
		t.Fatal(err)
	}
	return rec.names
}

// metricRef finds metric names in PromQL. Histogram series are named by
// their family plus _bucket, _sum or _count.
var metricRef = regexp.MustCompile(`\bstreaming_hub_[a-z0-9_]+`)

func family(name string, registered map[string]bool) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && registered[base] {
			return base
		}
	}
	return name
}

// TestDeployFilesReferenceRegisteredMetrics keeps the Grafana dashboard and
// the Prometheus alert rules true to the hub: every metric they query is
// one the hub registers.
func TestDeployFilesReferenceRegisteredMetrics(t *testing.T) {
	registered := registeredMetrics(t)
	exprs := map[string][]string{
		"deploy/grafana/hubctl-dashboard.json": dashboardExprs(t, "../../deploy/grafana/hubctl-dashboard.json"),
		"deploy/prometheus/hubctl-alerts.yaml": alertExprs(t, "../../deploy/prometheus/hubctl-alerts.yaml"),
	}
	for file, list := range exprs {
		if len(list) == 0 {
			t.Errorf("%s: no queries found", file)
		}
		seen := 0
		for _, expr := range list {
			for _, ref := range metricRef.FindAllString(expr, -1) {
				seen++
				if !registered[family(ref, registered)] {
					t.Errorf("%s queries %s, which the hub does not register: %s", file, ref, expr)
				}
			}
		}
		if seen == 0 {
			t.Errorf("%s references no hub metric", file)
		}
	}
	// The on-call signals are all on the dashboard and alerted on.
	for _, name := range []string{
		"streaming_hub_delivery_oldest_due_age_seconds", "streaming_hub_delivery_backlog_jobs",
		"streaming_hub_kafka_consumer_lag_records", "streaming_hub_breakers_open",
		"streaming_hub_subscriptions_autodisabled", "streaming_hub_delivery_latency_seconds",
		"streaming_hub_ingest_last_batch_timestamp_seconds", "streaming_hub_storage_bytes",
	} {
		for file, list := range exprs {
			if !slices.ContainsFunc(list, func(e string) bool { return strings.Contains(e, name) }) {
				t.Errorf("%s does not use %s", file, name)
			}
		}
	}
}

func dashboardExprs(t *testing.T, path string) []string {
	t.Helper()
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(readFile(t, path), &dash); err != nil {
		t.Fatalf("%s is not dashboard JSON: %v", path, err)
	}
	var out []string
	for _, p := range dash.Panels {
		for _, target := range p.Targets {
			out = append(out, target.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		out = append(out, v.Definition)
	}
	return out
}

func alertExprs(t *testing.T, path string) []string {
	t.Helper()
	var rules struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(readFile(t, path), &rules); err != nil {
		t.Fatalf("%s is not a rules file: %v", path, err)
	}
	var out []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" {
				t.Errorf("%s: group %s has a rule without alert or expr", path, g.Name)
			}
			out = append(out, r.Expr)
		}
	}
	return out
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.FromSlash(path))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
