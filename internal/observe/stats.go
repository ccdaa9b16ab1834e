// Package observe turns a hub's Prometheus metrics into the few numbers an
// operator watches (Stats), from the process's own registry (for the
// heartbeat every instance stores) or a scrape of /metrics, and merges the
// stats of several instances. It does no I/O.
package observe

import (
	"math"
	"sort"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// The metric names Stats reads.
const (
	MetricIngestRecords   = "streaming_hub_ingest_records_total"
	MetricDeliveries      = "streaming_hub_deliveries_total"
	MetricLatency         = "streaming_hub_delivery_latency_seconds"
	MetricBacklog         = "streaming_hub_delivery_backlog_jobs"
	MetricDue             = "streaming_hub_delivery_due_jobs"
	MetricOldestDue       = "streaming_hub_delivery_oldest_due_age_seconds"
	MetricBreakersOpen    = "streaming_hub_breakers_open"
	MetricAutoDisabled    = "streaming_hub_subscriptions_autodisabled"
	MetricKafkaLag        = "streaming_hub_kafka_consumer_lag_records"
	MetricLastIngestBatch = "streaming_hub_ingest_last_batch_timestamp_seconds"
)

// Stats is one reading of one hub (or of several, merged).
type Stats struct {
	// Ingest counts records ingested by verdict (accept, discard,
	// quarantine) since the process started.
	Ingest map[string]float64 `json:"ingest,omitempty"`
	// Deliveries counts attempts by outcome (succeeded, failed).
	Deliveries map[string]float64 `json:"deliveries,omitempty"`
	// Latency is the produce→delivered histogram.
	Latency Histogram `json:"latency"`
	// Backlog is the delivery backlog by tenant, largest first.
	Backlog []TenantBacklog `json:"backlog,omitempty"`
	// BreakersOpen counts breakers open or half-open.
	BreakersOpen float64 `json:"breakers_open"`
	// AutoDisabled counts auto-disabled subscriptions.
	AutoDisabled float64 `json:"auto_disabled"`
	// Lag is the consumer lag of each partition, by topic and partition.
	Lag []PartitionLag `json:"lag,omitempty"`
}

// TenantBacklog is one tenant's delivery backlog.
type TenantBacklog struct {
	Tenant           string  `json:"tenant"`
	Pending          float64 `json:"pending"`
	Due              float64 `json:"due"`
	OldestDueSeconds float64 `json:"oldest_due_seconds"`
}

// PartitionLag is one partition's consumer lag.
type PartitionLag struct {
	Topic     string  `json:"topic"`
	Partition int     `json:"partition"`
	Records   float64 `json:"records"`
}

// Histogram is a cumulative histogram: Counts[i] observations were at most
// Bounds[i]; Count in all.
type Histogram struct {
	Bounds []float64 `json:"bounds,omitempty"`
	Counts []float64 `json:"counts,omitempty"`
	Count  float64   `json:"count"`
	Sum    float64   `json:"sum"`
}

// FromFamilies reads Stats from gathered or scraped metric families.
func FromFamilies(families []*dto.MetricFamily) Stats {
	s := Stats{Ingest: map[string]float64{}, Deliveries: map[string]float64{}}
	backlog := map[string]*TenantBacklog{}
	tenant := func(m *dto.Metric) *TenantBacklog {
		name := label(m, "tenant")
		if backlog[name] == nil {
			backlog[name] = &TenantBacklog{Tenant: name}
		}
		return backlog[name]
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			switch f.GetName() {
			case MetricIngestRecords:
				s.Ingest[label(m, "verdict")] += m.GetCounter().GetValue()
			case MetricDeliveries:
				s.Deliveries[label(m, "outcome")] += m.GetCounter().GetValue()
			case MetricLatency:
				s.Latency = s.Latency.add(histogramOf(m.GetHistogram()))
			case MetricBacklog:
				tenant(m).Pending = m.GetGauge().GetValue()
			case MetricDue:
				tenant(m).Due = m.GetGauge().GetValue()
			case MetricOldestDue:
				tenant(m).OldestDueSeconds = m.GetGauge().GetValue()
			case MetricBreakersOpen:
				s.BreakersOpen += m.GetGauge().GetValue()
			case MetricAutoDisabled:
				s.AutoDisabled = max(s.AutoDisabled, m.GetGauge().GetValue())
			case MetricKafkaLag:
				p, _ := strconv.Atoi(label(m, "partition"))
				s.Lag = append(s.Lag, PartitionLag{Topic: label(m, "topic"), Partition: p, Records: m.GetGauge().GetValue()})
			}
		}
	}
	for _, b := range backlog {
		s.Backlog = append(s.Backlog, *b)
	}
	sortBacklog(s.Backlog)
	sortLag(s.Lag)
	return s
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func histogramOf(h *dto.Histogram) Histogram {
	out := Histogram{Count: float64(h.GetSampleCount()), Sum: h.GetSampleSum()}
	for _, b := range h.GetBucket() {
		out.Bounds = append(out.Bounds, b.GetUpperBound())
		out.Counts = append(out.Counts, float64(b.GetCumulativeCount()))
	}
	return out
}

// add sums two histograms with the same bounds; an empty one takes the
// other's bounds.
func (h Histogram) add(o Histogram) Histogram {
	if len(h.Bounds) == 0 {
		return Histogram{Bounds: append([]float64(nil), o.Bounds...), Counts: append([]float64(nil), o.Counts...), Count: h.Count + o.Count, Sum: h.Sum + o.Sum}
	}
	out := Histogram{Bounds: h.Bounds, Counts: append([]float64(nil), h.Counts...), Count: h.Count + o.Count, Sum: h.Sum + o.Sum}
	for i := range out.Counts {
		if i < len(o.Counts) {
			out.Counts[i] += o.Counts[i]
		}
	}
	return out
}

// Since is the histogram of the observations made after prev (a reading
// of the same process or processes), for quantiles over an interval.
func (h Histogram) Since(prev Histogram) Histogram {
	if len(prev.Counts) != len(h.Counts) || prev.Count > h.Count {
		return h // a restarted process: its counters began again
	}
	out := Histogram{Bounds: h.Bounds, Counts: make([]float64, len(h.Counts)), Count: h.Count - prev.Count, Sum: h.Sum - prev.Sum}
	for i := range h.Counts {
		out.Counts[i] = h.Counts[i] - prev.Counts[i]
	}
	return out
}

// Quantile estimates the q-quantile by linear interpolation within the
// bucket it falls in, as Prometheus's histogram_quantile does; NaN when the
// histogram is empty, the largest finite bound when it falls in +Inf.
func (h Histogram) Quantile(q float64) float64 {
	if h.Count == 0 || len(h.Bounds) == 0 {
		return math.NaN()
	}
	rank := q * h.Count
	lower, below := 0.0, 0.0
	for i, bound := range h.Bounds {
		if h.Counts[i] >= rank {
			inBucket := h.Counts[i] - below
			if inBucket == 0 {
				return bound
			}
			return lower + (bound-lower)*(rank-below)/inBucket
		}
		lower, below = bound, h.Counts[i]
	}
	return h.Bounds[len(h.Bounds)-1]
}

// Merge combines the stats of several instances: counters and histograms
// add up, as do open breakers (each process holds its own) and the lag of
// distinct partitions; the backlog and the auto-disabled count are read
// from the shared database by every instance, so the freshest reading is
// kept (the first given).
func Merge(all []Stats) Stats {
	out := Stats{Ingest: map[string]float64{}, Deliveries: map[string]float64{}}
	lag := map[[2]string]PartitionLag{}
	for i, s := range all {
		for k, v := range s.Ingest {
			out.Ingest[k] += v
		}
		for k, v := range s.Deliveries {
			out.Deliveries[k] += v
		}
		out.Latency = out.Latency.add(s.Latency)
		out.BreakersOpen += s.BreakersOpen
		if i == 0 || len(out.Backlog) == 0 {
			out.Backlog = s.Backlog
		}
		out.AutoDisabled = max(out.AutoDisabled, s.AutoDisabled)
		for _, l := range s.Lag {
			lag[[2]string{l.Topic, strconv.Itoa(l.Partition)}] = l
		}
	}
	for _, l := range lag {
		out.Lag = append(out.Lag, l)
	}
	sortLag(out.Lag)
	return out
}

func sortBacklog(b []TenantBacklog) {
	sort.Slice(b, func(i, j int) bool {
		if b[i].Pending != b[j].Pending {
			return b[i].Pending > b[j].Pending
		}
		return b[i].Tenant < b[j].Tenant
	})
}

func sortLag(l []PartitionLag) {
	sort.Slice(l, func(i, j int) bool {
		if l[i].Topic != l[j].Topic {
			return l[i].Topic < l[j].Topic
		}
		return l[i].Partition < l[j].Partition
	})
}

// Reading is Stats taken at a time, the unit rates are computed from.
type Reading struct {
	At    time.Time
	Stats Stats
}

// HeartbeatInterval is how often every instance stores its stats and
// breakers; an instance silent for StaleAfter is taken as stopped.
const (
	HeartbeatInterval = 5 * time.Second
	StaleAfter        = 3 * HeartbeatInterval
)
