package top

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/iostreams"
)

// Options are `hubctl top`'s flags and what it reads from.
type Options struct {
	IO       *iostreams.IOStreams
	Once     bool
	Interval time.Duration
	// Server is the hub to watch over HTTP; "" watches every instance
	// behind the configured database.
	Server string
	// Source opens what the options name; tests replace it.
	Source func(ctx context.Context, opts *Options) (Source, func(), error)
}

// NewCmd returns `hubctl top`. runF, when not nil, replaces running the
// view (tests check flags and options through it).
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Live view of the hub: ingest, delivery, backlog per tenant, breakers, Kafka lag",
		Long: `Show what an operator watches, redrawn in place every --interval: ingest
rate by verdict, delivery rate and produce-to-delivered latency, the backlog
of each tenant with the age of its oldest due job, open circuit breakers,
auto-disabled subscriptions and Kafka consumer lag by partition. Press q to
quit.

With --server, one hub is watched through its /metrics endpoint. Without it,
every instance behind the configured database is watched: each running hub
stores its counters, open breakers and lag in a heartbeat every 5s, and the
backlog is read from the database itself.

--once prints a single frame (two readings --interval apart, so rates are
real) without colour or screen control, for scripts and bug reports.`,
		Example: `  hubctl top
  hubctl top --once --interval 5s
  hubctl top --server http://hub-0.hubctl:8080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Interval < 100*time.Millisecond {
				return cmdutil.UsageErrorf("--interval must be at least 100ms")
			}
			target, err := hubaccess.Resolve(f)
			if err != nil {
				return err
			}
			opts.Server = target.Server
			if opts.Source == nil {
				opts.Source = func(ctx context.Context, o *Options) (Source, func(), error) { return openSource(ctx, f, o) }
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return run(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Once, "once", false, "print one frame and exit")
	cmd.Flags().DurationVar(&opts.Interval, "interval", 2*time.Second, "time between readings")
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	src, closeSource, err := opts.Source(ctx, opts)
	if err != nil {
		return err
	}
	defer closeSource()
	return Run(ctx, RunOptions{IO: opts.IO, Source: src, Interval: opts.Interval, Once: opts.Once})
}

// openSource is the hub's /metrics with --server, else the database.
func openSource(ctx context.Context, f *cmdutil.Factory, opts *Options) (Source, func(), error) {
	if opts.Server != "" {
		return NewMetricsSource(opts.Server, nil), func() {}, nil
	}
	cfg, err := f.Config()
	if err != nil {
		return nil, nil, err
	}
	if cfg.Postgres.DSN == "" {
		return nil, nil, cmdutil.UsageErrorf("no hub to watch: pass --server (or %s) for one hub, or --database-url (or STREAMING_HUB_POSTGRES_DSN) for every instance behind a database", hubaccess.EnvServer)
	}
	st, err := f.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	return NewDatabaseSource(st.OnCall, time.Now), st.Close, nil
}
