package events

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/config"
)

// maxDataBytes bounds what --data reads, so a mistaken `--data - < /dev/zero`
// ends with a message instead of exhausting memory. Kafka's own record
// limit (1 MB by default) is far below it.
const maxDataBytes = 16 << 20

// ProduceOptions is `hubctl events produce` parsed and checked: every
// event it would publish is built before Kafka is reached.
type ProduceOptions struct {
	Factory *cmdutil.Factory
	Config  *config.Config
	// Count is how many events to publish; Many is whether --count was
	// given, which prints a summary instead of the one id.
	Count int
	Many  bool

	tmpl template
}

// NewCmdProduce returns `hubctl events produce`; a non-nil runF replaces the
// real run.
func NewCmdProduce(f *cmdutil.Factory, runF func(*ProduceOptions) error) *cobra.Command {
	in := produceInput{}
	var data string
	var count int
	var rawHeaders, omit []string
	cmd := &cobra.Command{
		Use:   "produce",
		Short: "Publish well-formed CloudEvents to a Kafka topic",
		Long: `Publish CloudEvents in binary content mode, as the platform's services do:
attributes in ce- headers, the data as the record value, the tenant as the
record key.

Every event gets a fresh UUIDv7 id and the current time. Its type is
STREAMING_HUB_TYPE_PREFIX + <source> + "." + --type, e.g.
studio.lerian.midaz.transaction.posted, with ce-resourcetype and ce-eventtype
taken from --type. The topic defaults to the platform's rule,
lerian.streaming.<source>_<resourcetype>.<eventtype> with hyphens as
underscores.

Everything is checked before connecting, by the same rules ingest applies,
so what this command publishes is accepted by the hub (provided the tenant
is in its roster and active). TLS and SASL/SCRAM come from the hub's own
settings (STREAMING_HUB_KAFKA_*). The brokers are --brokers, else
STREAMING_HUB_KAFKA_BROKERS (or the --config file), else those of the
active context; the tenant is --tenant, else HUBCTL_TENANT, else the
context's. hubctl dev stores both in its context, so next to it neither
flag is needed.

Without --count, one event is published and its id printed on stdout, for
scripts to capture. With --count N, N events are published as fast as the
brokers take them, and a summary (events, elapsed time, events/s) is printed
on stderr.`,
		Example: `  hubctl events produce --type transaction.posted --data '{"amount": 100}'   # next to hubctl dev
  hubctl events produce --tenant acme --type transaction.posted --data '{"amount": 100}'
  hubctl events produce --tenant acme --type balance.config-changed --data @event.json
  echo '{"id": 7}' | hubctl events produce --tenant acme --type account.created --data -
  hubctl events produce --brokers kafka:9092 --tenant acme --type transaction.posted --count 100000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Checked here rather than with cobra's required flags, whose
			// complaint would not exit 2 like every other usage error.
			if !cmd.Flags().Changed("type") {
				return cmdutil.UsageErrorf("missing --type")
			}
			if count < 1 {
				return cmdutil.UsageErrorf("invalid --count %d: must be at least 1", count)
			}
			cfg, tenant, err := resolveKafka(f, true)
			if err != nil {
				return err
			}
			in.Tenant = tenant
			if in.Data, err = readData(data, in.ContentType, f.IOStreams.In); err != nil {
				return cmdutil.UsageErrorf("%w", err)
			}
			for _, kv := range rawHeaders {
				key, value, ok := strings.Cut(kv, "=")
				if !ok || key == "" {
					return cmdutil.UsageErrorf("invalid --header %q: want key=value", kv)
				}
				in.Headers = append(in.Headers, kgo.RecordHeader{Key: key, Value: []byte(value)})
			}
			in.Omit = omit
			tmpl, err := newTemplate(in, cfg.Ingest.TypePrefix)
			if err != nil {
				return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: err}
			}
			opts := &ProduceOptions{Factory: f, Config: cfg, Count: count, Many: cmd.Flags().Changed("count"), tmpl: tmpl}
			return cmdutil.Run(cmd.Context(), opts, runF, produceRun)
		},
	}
	fl := cmd.Flags()
	fl.StringSlice("brokers", nil, BrokersUsage)
	cmdutil.MustBindFlag(fl, "brokers", envBrokers)
	fl.String(hubaccess.FlagTenant, "", tenantUsage)
	fl.StringVar(&in.Type, "type", "", "event key <resourcetype>.<eventtype>, e.g. transaction.posted; required")
	fl.StringVar(&in.Topic, "topic", "", "topic to publish to (default lerian.streaming.<source>_<resourcetype>.<eventtype>)")
	fl.StringVar(&in.Source, "source", "midaz", "producing service (ce-source, and part of the type and topic)")
	fl.StringVar(&in.SchemaVersion, "schema-version", "1.0.0", "schema version of the data (ce-schemaversion)")
	fl.StringVar(&data, "data", "", `event data: a literal, @FILE to read a file, or - to read stdin (default {} for JSON, else empty)`)
	fl.StringVar(&in.ContentType, "content-type", "application/json", "content type of the data (content-type header); JSON data is checked")
	fl.StringVar(&in.Subject, "subject", "", "subject of the event (ce-subject)")
	fl.IntVar(&count, "count", 1, "publish N events as fast as possible and print a summary instead of ids")
	fl.StringArrayVar(&rawHeaders, "header", nil, "add a record header key=value as given, e.g. ce-id=not-a-uuid (repeatable; skips the well-formedness check)")
	fl.StringArrayVar(&omit, "omit", nil, "leave out the header of an attribute, e.g. tenantid or ce-time (repeatable; skips the well-formedness check)")
	return cmd
}

func produceRun(ctx context.Context, opts *ProduceOptions) error {
	cfg, tmpl := opts.Config, opts.tmpl
	if !cfg.Kafka.WantsTopic(tmpl.topic) {
		fmt.Fprintf(opts.Factory.IOStreams.ErrOut, "Warning: the hub does not consume topic %s (see STREAMING_HUB_KAFKA_TOPICS and STREAMING_HUB_KAFKA_TOPICS_EXCLUDE)\n", tmpl.topic)
	}

	kopts, err := clientOptions(ctx, cfg.Kafka)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	client, err := kgo.NewClient(kopts...)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitUsage, fmt.Errorf("kafka client: %w", err))
	}
	defer client.Close()
	if err := ping(ctx, client); err != nil {
		return cmdutil.WithCode(kafkaExitCode(err), newUnreachable(cfg.Kafka, err))
	}

	if !opts.Many {
		now := time.Now()
		id := newEventID()
		if err := client.ProduceSync(ctx, tmpl.record(id, now)).FirstErr(); err != nil {
			return cmdutil.WithCode(kafkaExitCode(err), fmt.Errorf("publish to %s: %w", tmpl.topic, err))
		}
		_, err := fmt.Fprintln(opts.Factory.IOStreams.Out, id)
		return err
	}

	start := time.Now()
	produced, err := produceMany(ctx, client, tmpl, opts.Count)
	elapsed := time.Since(start)
	if err != nil {
		return cmdutil.WithCode(kafkaExitCode(err),
			fmt.Errorf("published %d of %d events to %s, then: %w", produced, opts.Count, tmpl.topic, err))
	}
	_, err = fmt.Fprintf(opts.Factory.IOStreams.ErrOut, "Published %d events to %s in %s (%.0f events/s)\n",
		produced, tmpl.topic, elapsed.Round(time.Millisecond), float64(produced)/elapsed.Seconds())
	return err
}

// readData resolves --data: "-" reads r (stdin), "@path" reads a file, ""
// gives an empty JSON object for JSON content (an empty body otherwise), and
// anything else is the data itself.
func readData(arg, contentType string, stdin io.Reader) ([]byte, error) {
	switch {
	case arg == "":
		if isJSONContentType(contentType) {
			return []byte("{}"), nil
		}
		return []byte{}, nil
	case arg == "-":
		return readAtMost(stdin, "stdin")
	case strings.HasPrefix(arg, "@"):
		path := arg[1:]
		if path == "" {
			return nil, fmt.Errorf("invalid --data %q: name a file after @", arg)
		}
		file, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("invalid --data: %w", err)
		}
		defer file.Close()
		return readAtMost(file, path)
	}
	return []byte(arg), nil
}

func readAtMost(r io.Reader, name string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxDataBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read --data from %s: %w", name, err)
	}
	if len(b) > maxDataBytes {
		return nil, fmt.Errorf("--data from %s is larger than %d MiB", name, maxDataBytes>>20)
	}
	return b, nil
}

func ping(ctx context.Context, client *kgo.Client) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	return client.Ping(ctx)
}

// produceMany publishes count events asynchronously, letting the client
// batch them, and waits until every one is acknowledged. It stops at the
// first failure, returning it with the number acknowledged so far.
func produceMany(ctx context.Context, client *kgo.Client, tmpl template, count int) (acked int64, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var done atomic.Int64
	var mu sync.Mutex
	var firstErr error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
			cancel(err) // stop producing: the rest would fail the same way
		}
	}
	promise := func(_ *kgo.Record, err error) {
		if err != nil {
			fail(err)
			return
		}
		done.Add(1)
	}
	for i := 0; i < count && ctx.Err() == nil; i++ {
		now := time.Now()
		client.Produce(ctx, tmpl.record(newEventID(), now), promise)
	}
	if err := client.Flush(ctx); err != nil {
		fail(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return done.Load(), firstErr
}
