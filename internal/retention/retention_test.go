package retention_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/internal/retention"
	"github.com/hubctl/hubctl/internal/store"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var week = store.RetentionPolicy{Events: 168 * time.Hour, Deliveries: 168 * time.Hour, Quarantine: 168 * time.Hour}

func TestRunOncePrunesCountsAndRefreshesTheGauges(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.DSN(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	today := store.DayStart(time.Now())
	if err := st.EnsurePartitions(ctx, today); err != nil {
		t.Fatal(err)
	}
	// Three quarantined records of today, which a clock ten days on finds
	// expired.
	if _, err := st.Pool.Exec(ctx, `
INSERT INTO quarantine (reason, topic, kafka_partition, kafka_offset, header_keys, header_values, value, value_size, value_sha256, received_at)
SELECT 'invalid_time', 'topic', 0, g, '{}', '{}', '\x00', 1, sha256('\x00'), $1 FROM generate_series(1, 3) g`, today.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	clock := today.Add(10 * 24 * time.Hour)
	r, err := retention.New(retention.Options{Store: st, Policy: week, Interval: time.Minute, Registerer: reg,
		Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}

	// Another process holds the lock: this one neither prunes nor waits,
	// but still refreshes its gauges.
	err = st.WithRetentionLock(ctx, func() error {
		if r.RunOnce(ctx) {
			t.Error("RunOnce pruned while another process held the retention lock")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := seriesCount(reg, "streaming_hub_storage_bytes"); n != 6 {
		t.Errorf("storage_bytes has %d tables, want 6", n)
	}
	if got := value(reg, "streaming_hub_retention_dropped_rows_total", "quarantine"); got != 0 {
		t.Errorf("dropped %v rows without the lock", got)
	}

	if !r.RunOnce(ctx) {
		t.Fatal("RunOnce did not prune with the lock free")
	}
	if got := value(reg, "streaming_hub_retention_dropped_rows_total", "quarantine"); got != 3 {
		t.Errorf("dropped_rows_total{table=quarantine} = %v, want 3", got)
	}
	if got := value(reg, "streaming_hub_retention_dropped_bytes_total", "quarantine"); got <= 0 {
		t.Errorf("dropped_bytes_total{table=quarantine} = %v, want the partition's size", got)
	}
	if got := value(reg, "streaming_hub_retention_last_run_timestamp_seconds", ""); got != float64(clock.Unix()) {
		t.Errorf("last_run = %v, want %d", got, clock.Unix())
	}
	if got := value(reg, "streaming_hub_storage_oldest_row_timestamp_seconds", "quarantine"); got != 0 {
		t.Errorf("oldest quarantine row after the prune = %v, want no series (empty)", got)
	}
}

// seriesCount is how many series a metric family has.
func seriesCount(reg *prometheus.Registry, name string) int {
	families, _ := reg.Gather()
	for _, f := range families {
		if f.GetName() == name {
			return len(f.GetMetric())
		}
	}
	return 0
}

// value reads one series from the registry; 0 when it is absent.
func value(reg *prometheus.Registry, name, table string) float64 {
	families, err := reg.Gather()
	if err != nil {
		return -1
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			match := table == ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "table" && l.GetValue() == table {
					match = true
				}
			}
			if !match {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			}
		}
	}
	return 0
}
