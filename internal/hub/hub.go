// Package hub assembles a running hub from its parts — store, ingest,
// HTTP API — for `hubctl serve` and `hubctl dev`, and owns the shutdown
// sequence (docs/concepts.md, Shutdown).
package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/sync/errgroup"

	"github.com/hubctl/hubctl/internal/api"
	"github.com/hubctl/hubctl/internal/buildinfo"
	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/dispatch"
	"github.com/hubctl/hubctl/internal/maintenance"
	"github.com/hubctl/hubctl/internal/store"
	"github.com/hubctl/hubctl/internal/store/lifecycle"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/internal/tracing"
)

// getenv reads the process environment through lookup (os.LookupEnv in
// production, a map in tests).
func getenv(lookup func(string) (string, bool)) func(string) string {
	return func(name string) string {
		if lookup == nil {
			return ""
		}
		v, _ := lookup(name)
		return v
	}
}

// Options are what Run needs besides the configuration.
type Options struct {
	Config    *config.Config
	LookupEnv func(string) (string, bool)
	Logger    *slog.Logger
	// OnListening, when set, is called once the API listener is bound, with
	// its address (dev mode prints its banner then).
	OnListening func(addr net.Addr)
}

// component is a long-running part of the hub. Run returns when ctx is
// cancelled, after finishing the work in hand, or earlier on a fatal error.
type component interface {
	Run(ctx context.Context) error
}

// Run starts the hub and blocks until ctx is cancelled (SIGTERM) or a part
// fails. Shutdown: /readyz answers 503 at once, the parts finish what they
// hold within STREAMING_HUB_SHUTDOWN_TIMEOUT, then the listener closes.
func Run(ctx context.Context, opts Options) error {
	cfg, log := opts.Config, opts.Logger
	keys, err := LoadKeyring(cfg, opts.LookupEnv)
	if err != nil {
		return err
	}
	if err = pg.CheckSchema(ctx, cfg.Postgres.DSN); err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.Postgres.DSN, pg.Options{
		MaxConns: int32(cfg.Postgres.MaxOpenConns),
		AppName:  "hubctl serve (" + string(cfg.Role) + ")",
	})
	if err != nil {
		return err
	}
	defer st.Close()

	tracer, err := tracing.Setup(ctx, getenv(opts.LookupEnv), buildinfo.Get().Version)
	if err != nil {
		return err
	}
	defer func() {
		// Spans still buffered are sent before the process exits.
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tracer.Shutdown(flushCtx); err != nil {
			log.Warn("flushing traces at shutdown failed", "error", err)
		}
	}()
	if tracer != nil {
		log.Info("tracing on: spans are exported over OTLP as the OTEL_* variables configure")
	}

	metrics := prometheus.NewRegistry()
	metrics.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	// Every role serves /v1, whose create and verify probe destinations, so
	// the sinks and the subscription use cases exist on every role; the
	// dispatcher shares them.
	control := NewControlPlane(cfg, st, func() (*crypto.Keyring, error) { return keys, nil })
	defer control.Close()
	subscriptions, err := control.Subscriptions()
	if err != nil {
		return err
	}

	checks := map[string]api.ReadinessCheck{"database": st.Ping}
	var parts []component
	// One name for this process on leases, breakers and its heartbeat.
	owner := dispatch.DefaultOwner()
	var (
		// A nil *Dispatcher in these interfaces would not be nil.
		handoff   queue.Handoff
		upkeepFor maintenance.Dispatcher
	)
	if cfg.Role.RunsDelivery() {
		dispatcher, err := newDispatch(cfg, st, subscriptions, log, metrics, tracer, owner)
		if err != nil {
			return err
		}
		parts = append(parts, dispatcher)
		handoff, upkeepFor = dispatcher, dispatcher
	}
	if cfg.Role.RunsIngest() {
		consumer, err := newIngest(cfg, st, log, metrics, tracer, handoff)
		if err != nil {
			return err
		}
		defer consumer.Close() // when start-up fails before Run
		parts = append(parts, consumer)
		checks["ingest"] = func(context.Context) error {
			if consumer.Fenced() {
				return errors.New("fenced: another process joined the Kafka group with this STREAMING_HUB_KAFKA_INSTANCE_ID")
			}
			if !consumer.Ready() {
				if problem := consumer.BrokerProblem(); problem != nil {
					return errors.New("the Kafka consumer cannot use the brokers: " + problem.String())
				}
				return errors.New("the Kafka consumer has not joined its group")
			}
			return nil
		}
	}
	if cfg.Kafka.OperationalTopic != "" {
		relay, producer, err := newRelay(cfg, st, log, metrics)
		if err != nil {
			return err
		}
		defer producer.Close() // after the parts stopped
		parts = append(parts, relay)
	}
	upkeep, err := newMaintenance(cfg, st, log, metrics, metrics, owner, upkeepFor)
	if err != nil {
		return err
	}
	parts = append(parts, upkeep)

	var gatherer prometheus.Gatherer
	if cfg.MetricsEnabled {
		gatherer = metrics
	}
	server := NewAPI(cfg, st, control, keys, api.Options{Logger: log, Gatherer: gatherer, Checks: checks})
	httpServer := &http.Server{
		Handler:           server,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// Above the longest verification probe (attempt_timeout ≤ 60s plus
		// grace) so create and verify answer instead of being cut off.
		WriteTimeout: 90 * time.Second,
		IdleTimeout:  120 * time.Second,
		ErrorLog:     slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	serve, err := listenerTLS(cfg, httpServer)
	if err != nil {
		return err
	}
	listener, err := net.Listen("tcp", cfg.HTTPListenAddr)
	if err != nil {
		return fmt.Errorf("listen on STREAMING_HUB_HTTP_LISTEN_ADDR=%s: %w", cfg.HTTPListenAddr, err)
	}
	log.Info("hub started", "role", cfg.Role, "http", listener.Addr().String(), "tls", httpServer.TLSConfig != nil, "env", cfg.Environment)
	if opts.OnListening != nil {
		opts.OnListening(listener.Addr())
	}

	// Parts run under their own context: it is cancelled when shutdown
	// starts, not when a sibling fails first, so each part's own shutdown
	// path (finish the batch in hand) always runs.
	partsCtx, stopParts := context.WithCancel(context.WithoutCancel(ctx))
	defer stopParts()
	group, groupCtx := errgroup.WithContext(partsCtx)
	for _, p := range parts {
		group.Go(func() error { return p.Run(partsCtx) })
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- serve(listener) }()

	var failure error
	select {
	case <-ctx.Done():
		log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	case <-groupCtx.Done():
		failure = errors.New("a hub component stopped unexpectedly")
	case err := <-serveErr:
		failure = fmt.Errorf("HTTP server: %w", err)
	}

	server.Drain()
	stopParts()
	done := make(chan error, 1)
	go func() { done <- group.Wait() }()
	timer := time.NewTimer(cfg.ShutdownTimeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			failure = errors.Join(failure, err)
		}
	case <-timer.C:
		// Unfinished leases expire and are recovered by another process
		// (docs/concepts.md, Shutdown); leaving now is safe.
		log.Warn("shutdown timeout reached; abandoning work in flight", "timeout", cfg.ShutdownTimeout)
	}

	httpCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = httpServer.Shutdown(httpCtx)
	if failure != nil {
		return failure
	}
	log.Info("hub stopped")
	return nil
}

// retentionPolicy is the configured storage retention (STREAMING_HUB_RETENTION_*).
func retentionPolicy(cfg *config.Config) lifecycle.RetentionPolicy {
	return lifecycle.RetentionPolicy{Events: cfg.Retention.Events, Deliveries: cfg.Retention.Deliveries, Quarantine: cfg.Retention.Quarantine}
}
