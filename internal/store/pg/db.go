package pg

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options tune the pool.
type Options struct {
	MaxConns int32
	// AppName shows in pg_stat_activity so operators can tell hub
	// connections (and roles) apart.
	AppName string
}

// Open connects a pool and checks that the server answers.
func Open(ctx context.Context, dsn string, opts Options) (*pgxpool.Pool, error) {
	cfg, err := parseConfig(dsn)
	if err != nil {
		return nil, err
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if opts.AppName != "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = opts.AppName
	}
	cfg.HealthCheckPeriod = 15 * time.Second
	cfg.AfterConnect = disableJIT
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, Classify(fmt.Errorf("connect to PostgreSQL: %w", err))
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, Classify(fmt.Errorf("connect to PostgreSQL at %s: %w", describeTarget(cfg), err))
	}
	return pool, nil
}

// disableJIT turns PostgreSQL's JIT compilation off for a new connection.
// The hub's statements are short and run all the time; JIT pays only for
// long analytical queries. Under a backlog the planner's estimates pass
// jit_above_cost, and compiling the claim took ~5 s of CPU per claim
// with a million jobs queued, for a statement that runs in milliseconds:
// dispatch delivered nothing (TestChaosBacklogMemory). A SET, not a
// startup parameter, so that poolers which refuse unknown startup
// parameters (PgBouncer) still connect.
//
// The SET cannot be refused on a server the hub supports, so a failure
// here is the new connection failing (the database went away while it was
// set up) and is reported as unavailable, like a failed dial: callers back
// off and try again. Reported otherwise, a recorder gave up on a success
// it had delivered, and the job went out twice once its lease expired.
func disableJIT(ctx context.Context, conn *pgx.Conn) error {
	if _, err := conn.Exec(ctx, disableJITSQL); err != nil {
		return fmt.Errorf("%w: turn JIT off on a new connection: %w", ErrUnavailable, err)
	}
	return nil
}

// InTx runs fn in one transaction, committing when fn returns nil and rolling
// back otherwise. Errors come back classified.
//
// A transaction that lost a race PostgreSQL reports as a serialization
// failure runs again, up to serializationRetries times, so fn must leave
// nothing behind but what it writes in tx. The common case: a statement
// locking a delivery job that another transaction just moved between the
// live and terminal partitions (two replays of one dead letter, say); run
// again, it sees the job where it now is.
func InTx(ctx context.Context, pool *pgxpool.Pool, fn func(pgx.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := pgx.BeginFunc(ctx, pool, fn)
		if attempt < serializationRetries && isSerializationFailure(err) && ctx.Err() == nil {
			continue
		}
		return Classify(err)
	}
}

const serializationRetries = 4

func isSerializationFailure(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

func parseConfig(dsn string) (*pgxpool.Config, error) {
	if dsn == "" {
		return nil, errors.New("no database configured: set STREAMING_HUB_POSTGRES_DSN or --database-url")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors can echo the DSN, password included.
		return nil, errors.New("invalid STREAMING_HUB_POSTGRES_DSN: not a PostgreSQL URL or key=value connection string")
	}
	return cfg, nil
}

// describeTarget names the server without credentials, for error messages.
func describeTarget(cfg *pgxpool.Config) string {
	cc := cfg.ConnConfig
	return fmt.Sprintf("%s:%d/%s", cc.Host, cc.Port, cc.Database)
}

//go:embed sql/disable_jit.sql
var disableJITSQL string
