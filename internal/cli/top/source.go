package top

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hubctl/hubctl/internal/observe"
	"github.com/hubctl/hubctl/internal/store/oncall"
)

// Source reads one snapshot of what top shows.
type Source interface {
	// Name says what is watched, for the frame's header.
	Name() string
	Read(ctx context.Context) (Snapshot, error)
}

// metricsSource scrapes one hub's /metrics.
type metricsSource struct {
	url    string // the hub's base URL
	client *http.Client
	now    func() time.Time
}

// NewMetricsSource watches the hub at base (http://host:port) through its
// /metrics endpoint.
func NewMetricsSource(base string, client *http.Client) Source {
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	return &metricsSource{url: strings.TrimSuffix(base, "/"), client: client, now: time.Now}
}

func (m *metricsSource) Name() string { return m.url }

func (m *metricsSource) Read(ctx context.Context) (Snapshot, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.url+"/metrics", nil)
	if err != nil {
		return Snapshot{}, err
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	resp, err := m.client.Do(req)
	if err != nil {
		return Snapshot{}, fmt.Errorf("read %s/metrics: %w", m.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Snapshot{}, fmt.Errorf("read %s/metrics: %s (is STREAMING_HUB_METRICS_ENABLED off?)", m.url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return Snapshot{}, fmt.Errorf("read %s/metrics: %w", m.url, err)
	}
	list := make([]*dto.MetricFamily, 0, len(families))
	for _, f := range families {
		list = append(list, f)
	}
	return Snapshot{At: observe.Reading{At: m.now(), Stats: observe.FromFamilies(list)}}, nil
}

// Store is what the database source reads.
type Store interface {
	Instances(ctx context.Context, now time.Time, staleAfter time.Duration) ([]oncall.Instance, error)
	BacklogByTenant(ctx context.Context, now time.Time) ([]oncall.TenantBacklog, error)
	BreakerStates(ctx context.Context, tenantID, destination string, now time.Time, staleAfter time.Duration) ([]oncall.BreakerState, error)
	AutoDisabledSubscriptions(ctx context.Context) (int64, error)
}

// databaseSource reads every running instance's heartbeat and the shared
// state behind them.
type databaseSource struct {
	store Store
	now   func() time.Time
}

// NewDatabaseSource watches every hub that heartbeats into the database.
func NewDatabaseSource(st Store, now func() time.Time) Source {
	if now == nil {
		now = time.Now
	}
	return &databaseSource{store: st, now: now}
}

func (d *databaseSource) Name() string { return "database (all instances)" }

func (d *databaseSource) Read(ctx context.Context) (Snapshot, error) {
	now := d.now()
	instances, err := d.store.Instances(ctx, now, observe.StaleAfter)
	if err != nil {
		return Snapshot{}, err
	}
	snap := Snapshot{Fleet: true}
	all := make([]observe.Stats, 0, len(instances))
	// The readings are as old as the heartbeats: rates between two frames
	// are rates between heartbeats, so the frame is stamped with the newest.
	var at time.Time
	for _, in := range instances {
		var s observe.Stats
		if err := json.Unmarshal(in.Stats, &s); err != nil {
			return Snapshot{}, fmt.Errorf("instance %s: stats: %w", in.Owner, err)
		}
		all = append(all, s)
		snap.Instances = append(snap.Instances, Instance{Owner: in.Owner, Role: in.Role, Version: in.Version, Age: max(now.Sub(in.HeartbeatAt), 0)})
		if in.HeartbeatAt.After(at) {
			at = in.HeartbeatAt
		}
	}
	if len(instances) == 0 {
		at = now
	}
	stats := observe.Merge(all)

	// The shared state is read directly, exact and for every tenant.
	backlog, err := d.store.BacklogByTenant(ctx, now)
	if err != nil {
		return Snapshot{}, err
	}
	stats.Backlog = stats.Backlog[:0]
	for _, b := range backlog {
		t := observe.TenantBacklog{Tenant: b.TenantID, Pending: float64(b.Pending), Due: float64(b.Due)}
		if !b.OldestDue.IsZero() {
			t.OldestDueSeconds = max(now.Sub(b.OldestDue).Seconds(), 0)
		}
		stats.Backlog = append(stats.Backlog, t)
	}
	disabled, err := d.store.AutoDisabledSubscriptions(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	stats.AutoDisabled = float64(disabled)
	states, err := d.store.BreakerStates(ctx, "", "", now, observe.StaleAfter)
	if err != nil {
		return Snapshot{}, err
	}
	snap.Breakers = mergeBreakers(states)
	stats.BreakersOpen = float64(len(snap.Breakers))
	snap.At = observe.Reading{At: at, Stats: stats}
	return snap, nil
}

// mergeBreakers lists each (tenant, destination) once, with how many
// processes hold it and the latest end among them; open outranks half-open.
func mergeBreakers(states []oncall.BreakerState) []Breaker {
	var out []Breaker
	index := map[[2]string]int{}
	for _, s := range states {
		state := strings.ReplaceAll(s.State, "_", "-")
		k := [2]string{s.TenantID, s.Destination}
		i, seen := index[k]
		if !seen {
			index[k] = len(out)
			out = append(out, Breaker{Tenant: s.TenantID, Destination: s.Destination, State: state, Until: s.OpenUntil, Instances: 1})
			continue
		}
		b := &out[i]
		b.Instances++
		if s.OpenUntil.After(b.Until) {
			b.Until = s.OpenUntil
		}
		if state == "open" {
			b.State = "open"
		}
	}
	return out
}
