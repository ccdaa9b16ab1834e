// Package bench implements `hubctl bench`: an end-to-end benchmark of a
// running hub (hubctl dev or a deployment). It produces events to Kafka,
// has the hub deliver them to a verifying loopback receiver (listen's) or
// a given URL, and reports throughput, produce→delivered latency, CPU per
// delivery where /proc shows it, and the rate of a bare signed HTTP loop on
// the same receiver (docs/benchmarks.md, hubctl bench). The arithmetic is
// internal/benchmark's.
package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/benchmark"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/events"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
)

// Defaults of the flags.
const (
	defaultEvents      = 10000
	defaultSize        = 1024
	defaultBareWorkers = 8
	defaultTimeout     = 5 * time.Minute
	defaultName        = "hubctl-bench"
	defaultSink        = "webhook"
	defaultAddr        = "127.0.0.1:0"
	// defaultLinger is franz-go's own default, so a bench without
	// --linger produces as a client left at its defaults does.
	defaultLinger = 10 * time.Millisecond
	// maxLinger is the longest linger franz-go accepts.
	maxLinger = time.Minute
	// EventKey is the event key of the bench's events, which its
	// subscription alone asks for (unless another subscription takes '*').
	EventKey = "bench.delivered"
)

// Options is `hubctl bench` parsed and checked.
type Options struct {
	Factory *cmdutil.Factory
	Format  output.Format

	Events int
	Rate   float64 // events/s, 0 for as fast as possible
	Size   int
	// Linger is how long the bench's producer holds a partition's records
	// for more before sending them: what a steady rate's latency starts
	// with, and what sets the size of the batches the hub reads.
	Linger  time.Duration
	Timeout time.Duration

	// URL is the receiver the user gave; "" runs the bench's own on Addr.
	URL string
	// Sink is the sink type of the bench subscription; SinkConfig the
	// file holding the rest of its sink object, for every type but
	// webhook, and SinkObject that object as read, "type" included.
	Sink       string
	SinkConfig string
	SinkObject json.RawMessage

	Addr string
	Name string
	Keep bool

	HubPID       int
	BareRequests int
	BareWorkers  int
}

// NewCmd returns `hubctl bench`; a non-nil runF replaces the real run.
func NewCmd(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := Options{Factory: f}
	var format string
	cmd := &cobra.Command{
		Use:   "bench [-n 10000] [--rate R] [--size 1024] [--url URL] [--hub-pid PID] [-o json]",
		Short: "Measure the hub end to end: Kafka → ingest → dispatch → a verifying receiver",
		Long: `Benchmark a running hub (hubctl dev or a deployment) end to end.

bench creates a webhook subscription named --name for the bench's event key
(bench.delivered) in the tenant of the context (or --tenant with the admin
token), or reuses the one of that name, pointing at a receiver of its own
on --addr that verifies every signature with the subscription's signing
secret, as hubctl listen does. It waits for the subscription to be active,
sends a bare loop of signed POSTs of the same size straight to that
receiver (--bare-n from --bare-workers workers), then produces -n events
of --size bytes to Kafka (--brokers, else STREAMING_HUB_KAFKA_BROKERS,
else the context's brokers, which hubctl dev stores) at --rate events/s or
as fast as possible, each partition's records held up to --linger for
more before they are sent, and measures until every one is delivered or
--timeout passes.

It prints deliveries/s, the produce→delivered latency p50/p95/p99/max as
the receiver saw it (and timed from the broker's acknowledgement of each
produce, which leaves out the producer's batching wait), the ratio of the
hub's rate to the bare loop's, and CPU per delivery: the hub's with
--hub-pid, PostgreSQL's (every postgres process on this machine) when the
configured database is local; "unavailable" otherwise; and the WAL the
database server wrote per delivery when the configured database answers
(the whole server's WAL: the hub's alone on a server nothing else writes
to, as hubctl dev's). --url sends deliveries and the bare loop to a
receiver of yours instead, unverified; delivery is then read from the
hub's delivery records and latency ends at their succeeded_at.

--sink TYPE with --sink-config FILE benchmarks another sink type (kafka,
nats, s3, pubsub, sqs, rabbitmq, eventbridge, …): FILE holds the rest of the sink
object, as subs create takes it. Delivery is read from the hub's delivery
records, as with --url, and the bare loop runs against the bench's own
receiver, so the ratio compares the sink with a bare webhook loop on this
machine; run the bench without --sink for the webhook sink's figures.

The subscription is deleted at the end unless --keep or it was reused.
The hub must allow a loopback destination (STREAMING_HUB_ALLOW_PRIVATE_SINKS,
as hubctl dev does) for the bench's own receiver.`,
		Example: `  hubctl dev   # in another terminal
  hubctl bench
  hubctl bench -n 20000 --size 1024 --hub-pid "$(pgrep -f 'hubctl serve')" -o json
  hubctl bench -n 5000 --rate 1000   # latency at a steady rate
  hubctl bench -n 5000 --rate 1000 --linger 0   # each event sent on its own
  echo '{"brokers": ["127.0.0.1:9092"], "topic": "bench-out"}' > kafka.json
  hubctl bench --sink kafka --sink-config kafka.json
  gcloud beta emulators pubsub start --host-port 127.0.0.1:8085   # and create the topic
  echo '{"project": "bench", "topic": "bench-out", "endpoint": "127.0.0.1:8085"}' > pubsub.json
  hubctl bench --sink pubsub --sink-config pubsub.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			opts.Format = fm
			if err := opts.check(); err != nil {
				return err
			}
			return cmdutil.Run(cmd.Context(), &opts, runF, run)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, "")
	fs := cmd.Flags()
	fs.IntVarP(&opts.Events, "events", "n", defaultEvents, "events to produce")
	fs.Float64Var(&opts.Rate, "rate", 0, "events per second to produce (0: as fast as possible)")
	fs.IntVar(&opts.Size, "size", defaultSize, "payload bytes of each event and bare request")
	fs.DurationVar(&opts.Linger, "linger", defaultLinger, "how long the producer waits for more records of a partition before sending (0: send at once)")
	fs.DurationVar(&opts.Timeout, "timeout", defaultTimeout, "give up on deliveries still missing after this long")
	fs.StringVar(&opts.URL, "url", "", "deliver to this receiver instead of the bench's own (no signature check)")
	fs.StringVar(&opts.Sink, "sink", defaultSink, "sink type of the bench subscription")
	fs.StringVar(&opts.SinkConfig, "sink-config", "", "file holding the rest of the sink object, for --sink other than webhook")
	fs.StringVar(&opts.Addr, "addr", defaultAddr, "address of the bench's receiver; the hub must reach it")
	fs.StringVar(&opts.Name, "name", defaultName, "name of the bench subscription, reused if it exists")
	fs.BoolVar(&opts.Keep, "keep", false, "keep the subscription the bench created")
	fs.IntVar(&opts.HubPID, "hub-pid", 0, "process id of the hub on this machine, to read its CPU time and peak memory from /proc")
	fs.IntVar(&opts.BareRequests, "bare-n", 0, "requests of the bare loop (default: -n)")
	fs.IntVar(&opts.BareWorkers, "bare-workers", defaultBareWorkers, "concurrent workers of the bare loop")
	fs.StringSlice("brokers", nil, events.BrokersUsage)
	cmdutil.MustBindFlag(fs, "brokers", "STREAMING_HUB_KAFKA_BROKERS")
	fs.String(hubaccess.FlagTenant, "", "tenant to benchmark ("+hubaccess.EnvTenant+"); required on the database and with the admin token")
	return cmd
}

func (o *Options) check() error {
	switch {
	case o.Events < 1:
		return cmdutil.UsageErrorf("invalid -n %d: must be at least 1", o.Events)
	case !(o.Rate >= 0): // also refuses NaN
		return cmdutil.UsageErrorf("invalid --rate %v: must be 0 (as fast as possible) or more", o.Rate)
	case o.Size < benchmark.MinPayloadBytes || o.Size > 1<<20:
		return cmdutil.UsageErrorf("invalid --size %d: must be between %d and %d bytes", o.Size, benchmark.MinPayloadBytes, 1<<20)
	case o.Linger < 0 || o.Linger > maxLinger:
		return cmdutil.UsageErrorf("invalid --linger %s: must be between 0 and %s", o.Linger, maxLinger)
	case o.Timeout <= 0:
		return cmdutil.UsageErrorf("invalid --timeout %s: must be positive", o.Timeout)
	case o.BareRequests < 0:
		return cmdutil.UsageErrorf("invalid --bare-n %d: must be 0 (same as -n) or more", o.BareRequests)
	case o.BareWorkers < 1:
		return cmdutil.UsageErrorf("invalid --bare-workers %d: must be at least 1", o.BareWorkers)
	case o.HubPID < 0:
		return cmdutil.UsageErrorf("invalid --hub-pid %d", o.HubPID)
	case o.Name == "":
		return cmdutil.UsageErrorf("--name is empty")
	}
	if o.BareRequests == 0 {
		o.BareRequests = o.Events
	}
	if err := o.checkSink(); err != nil {
		return err
	}
	if o.URL != "" {
		u, err := url.Parse(o.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return cmdutil.UsageErrorf("invalid --url %q: want an http(s) URL", o.URL)
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(o.Addr); err != nil {
		return cmdutil.UsageErrorf("invalid --addr %q: %v", o.Addr, err)
	}
	return nil
}

// checkSink reads the sink object of --sink and --sink-config.
func (o *Options) checkSink() error {
	switch {
	case o.Sink == defaultSink:
		if o.SinkConfig != "" {
			return cmdutil.UsageErrorf("--sink-config is for --sink other than webhook: the webhook sink is the bench's own receiver or --url")
		}
		return nil
	case o.Sink == "pull":
		return cmdutil.UsageErrorf("invalid --sink pull: a pull subscription is read, not delivered; hubctl pull measures it")
	case o.Sink == "":
		return cmdutil.UsageErrorf("--sink is empty")
	case o.URL != "":
		return cmdutil.UsageErrorf("--url is the webhook sink's receiver; --sink %s takes --sink-config", o.Sink)
	case o.SinkConfig == "":
		return cmdutil.UsageErrorf("--sink %s needs --sink-config FILE with the rest of its sink object", o.Sink)
	}
	raw, err := os.ReadFile(o.SinkConfig)
	if err != nil {
		return cmdutil.UsageErrorf("read --sink-config: %v", err)
	}
	object, err := SinkObject(o.Sink, raw)
	if err != nil {
		return cmdutil.UsageErrorf("invalid --sink-config %s: %v", o.SinkConfig, err)
	}
	o.SinkObject = object
	return nil
}

// SinkObject is the sink object of type typeName with the fields of
// config, a JSON object that may name the same type or none.
func SinkObject(typeName string, config []byte) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(config, &fields); err != nil || fields == nil {
		return nil, errors.New("want a JSON object with the sink's fields")
	}
	if given, ok := fields["type"]; ok {
		var t string
		if json.Unmarshal(given, &t) != nil || t != typeName {
			return nil, fmt.Errorf("its type is not %q", typeName)
		}
	}
	fields["type"], _ = json.Marshal(typeName)
	return json.Marshal(fields)
}

// readsRecords reports whether delivery is read from the hub's delivery
// records rather than seen by the bench's receiver.
func (o *Options) readsRecords() bool { return o.URL != "" || o.SinkObject != nil }

// unavailable is how text output shows a figure it could not read.
const unavailable = "unavailable"

// table is the text output: one figure per row.
func table(r benchmark.Result) func(*output.TableWriter) {
	return func(t *output.TableWriter) {
		t.Header("METRIC", "VALUE")
		t.Row("events", fmt.Sprintf("%d of %d bytes, producer linger %g ms", r.Events, r.SizeBytes, r.LingerMS))
		delivered := fmt.Sprintf("%d", r.Delivered)
		if r.TimedOut {
			delivered += " (timed out)"
		}
		if r.Duplicates > 0 {
			delivered += fmt.Sprintf(", %d redelivered", r.Duplicates)
		}
		t.Row("delivered", delivered)
		t.Row("elapsed", fmt.Sprintf("%.2fs", r.ElapsedSeconds))
		t.Row("throughput", fmt.Sprintf("%.0f deliveries/s", r.DeliveriesPerSecond))
		if l := r.Latency; l != nil {
			t.Row("latency p50", fmt.Sprintf("%.1f ms", l.P50))
			t.Row("latency p95", fmt.Sprintf("%.1f ms", l.P95))
			t.Row("latency p99", fmt.Sprintf("%.1f ms", l.P99))
			t.Row("latency max", fmt.Sprintf("%.1f ms", l.Max))
			if a := r.LatencyFromAck; a != nil {
				t.Row("from broker ack", fmt.Sprintf("p50 %.1f, p95 %.1f, p99 %.1f, max %.1f ms", a.P50, a.P95, a.P99, a.Max))
			}
		} else {
			t.Row("latency", unavailable)
		}
		t.Row("bare loop", fmt.Sprintf("%.0f requests/s (%d requests, %d workers)", r.Bare.RequestsPerSecond, r.Bare.Requests, r.Bare.Workers))
		t.Row("hub / bare", fmt.Sprintf("%.2f", r.Ratio))
		t.Row("hub CPU", micros(r.CPU.HubMicros))
		t.Row("PostgreSQL CPU", micros(r.CPU.PostgresMicros))
		peak := unavailable
		if r.Memory.HubPeakRSSMiB != nil {
			peak = fmt.Sprintf("%.0f MiB", *r.Memory.HubPeakRSSMiB)
		}
		t.Row("hub peak RSS", peak)
		wal := unavailable
		if r.WAL.BytesPerDelivery != nil {
			wal = fmt.Sprintf("%.0f bytes/delivery", *r.WAL.BytesPerDelivery)
		}
		t.Row("PostgreSQL WAL", wal)
	}
}

func micros(v *float64) string {
	if v == nil {
		return unavailable
	}
	return fmt.Sprintf("%.0f µs/delivery", *v)
}
