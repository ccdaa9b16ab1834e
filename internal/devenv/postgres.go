package devenv

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hubctl/hubctl/internal/childproc"
	"github.com/hubctl/hubctl/internal/freeport"
)

// PostgresOptions configure StartPostgres. The zero value starts a temporary
// server on a free port.
type PostgresOptions struct {
	// DataDir holds the cluster and keeps it across restarts; initdb runs
	// when it is missing or empty. Empty means a temporary cluster that
	// Stop removes.
	DataDir string
	// Port to listen on at 127.0.0.1; 0 picks a free one.
	Port int
	// Ephemeral turns off fsync and the like: much faster, but a crash of
	// the machine can corrupt the cluster. For tests, not for data to keep.
	Ephemeral bool
	// BinDir is the directory holding initdb and postgres; empty searches
	// pg_config --bindir, /usr/lib/postgresql/*/bin, then PATH.
	BinDir string
	// StartTimeout bounds the wait for the server to accept connections
	// (default 30s). ctx bounds the whole start, initdb included.
	StartTimeout time.Duration
	// Log, when set, receives the server's log as it is written. A failing
	// writer is ignored rather than allowed to stall the server.
	Log io.Writer
}

// Postgres is a running server started by StartPostgres.
type Postgres struct {
	port    int
	dataDir string
	runDir  string // socket, owner.pid, and the cluster when temporary
	binDir  string
	user    osUser
	proc    *childproc.Process

	stopOnce sync.Once
	stopErr  error
}

const (
	// hubDatabase is the database the hub uses, created at start.
	hubDatabase = "hubctl"

	defaultStartTimeout = 30 * time.Second
	readyPollInterval   = 50 * time.Millisecond
	// fastShutdownGrace bounds a fast shutdown, which normally takes well
	// under a second; immediateShutdownGrace bounds the next step.
	fastShutdownGrace      = 30 * time.Second
	immediateShutdownGrace = 5 * time.Second
	// portAttempts is how often we try fresh ports: a port we found free
	// can be taken by someone else before postgres binds it.
	portAttempts = 3

	logTailBytes = 16 << 10
	logTailLines = 25

	runDirPrefix = "hubctl-pg-"
	ownerFile    = "owner.pid"
	// maxSocketPath is the shortest sun_path limit among supported systems
	// (104 bytes on macOS and BSDs, 108 on Linux) less the terminating NUL.
	maxSocketPath = 103
)

// StartPostgres initialises (when needed) and starts a PostgreSQL server on
// 127.0.0.1, waits until it accepts connections and makes sure the hubctl
// database exists. The server is ours: Stop ends it, and on Linux it dies
// with this process.
func StartPostgres(ctx context.Context, opts PostgresOptions) (*Postgres, error) {
	if opts.Port != 0 {
		if err := CheckPortFree("PostgreSQL", opts.Port); err != nil {
			return nil, err
		}
	}
	binDir, err := findBinDir(ctx, opts.BinDir)
	if err != nil {
		return nil, err
	}
	u, err := serverUser()
	if err != nil {
		return nil, err
	}
	runDir, err := makeRunDir(u)
	if err != nil {
		return nil, err
	}
	p := &Postgres{runDir: runDir, dataDir: filepath.Join(runDir, "data"), binDir: binDir, user: u}
	if opts.DataDir != "" {
		if p.dataDir, err = filepath.Abs(opts.DataDir); err != nil {
			_ = os.RemoveAll(runDir)
			return nil, fmt.Errorf("data directory: %w", err)
		}
	}
	if err := p.start(ctx, binDir, u, opts); err != nil {
		_ = os.RemoveAll(runDir)
		return nil, err
	}
	return p, nil
}

func (p *Postgres) start(ctx context.Context, binDir string, u osUser, opts PostgresOptions) error {
	if err := ensureCluster(ctx, binDir, p.dataDir, u, opts.Ephemeral); err != nil {
		return err
	}
	if err := clearStalePID(p.dataDir); err != nil {
		return err
	}
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = defaultStartTimeout
	}
	for attempt := 1; ; attempt++ {
		port := opts.Port
		if port == 0 {
			var err error
			if port, err = freePort(); err != nil {
				return err
			}
		}
		serverLog := newTailBuffer(logTailBytes)
		proc, err := launchServer(binDir, p.dataDir, p.runDir, port, u, opts, serverLog)
		if err != nil {
			return err
		}
		p.proc, p.port = proc, port
		err = waitReady(ctx, proc, p.DSNFor("postgres"), p.dataDir, timeout)
		if err == nil {
			break
		}
		proc.Stop(nil, shutdownSteps...)
		tail := serverLog.lastLines(logTailLines)
		if isBindFailure(tail) {
			if opts.Port == 0 && attempt < portAttempts {
				continue
			}
			if opts.Port != 0 {
				return &PortInUseError{Service: "PostgreSQL", Port: port}
			}
		}
		return fmt.Errorf("%w\nserver log (last lines):\n%s", err, tail)
	}
	if err := createDatabase(ctx, p.DSNFor("postgres"), hubDatabase); err != nil {
		p.proc.Stop(nil, shutdownSteps...)
		return err
	}
	return nil
}

func launchServer(binDir, dataDir, socketDir string, port int, u osUser, opts PostgresOptions, serverLog *tailBuffer) (*childproc.Process, error) {
	cmd := exec.Command(filepath.Join(binDir, "postgres"), serverArgs(dataDir, socketDir, port, opts.Ephemeral)...)
	cmd.Env = childEnv()
	cmd.Dir = string(filepath.Separator) // our working directory may be closed to the server's user
	cmd.SysProcAttr = childSysProcAttr(u)
	var out io.Writer = serverLog
	if opts.Log != nil {
		out = io.MultiWriter(serverLog, ignoreErrors{opts.Log})
	}
	cmd.Stdout, cmd.Stderr = out, out
	// Backends that outlive a killed postmaster keep the log pipe open;
	// do not let Wait hang on them.
	cmd.WaitDelay = time.Second
	proc, err := childproc.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	return proc, nil
}

// waitReady polls until our server accepts a connection, it exits, or the
// timeout passes. A server of another cluster answering on the port (ours
// could not bind it) does not count.
func waitReady(ctx context.Context, proc *childproc.Process, dsn, dataDir string, timeout time.Duration) error {
	deadline, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ticker := time.NewTicker(readyPollInterval)
	defer ticker.Stop()
	for {
		attempt, cancelAttempt := context.WithTimeout(deadline, time.Second)
		conn, err := pgx.Connect(attempt, dsn)
		if err == nil {
			err = verifyIdentity(attempt, conn, dataDir)
			_ = conn.Close(deadline)
		}
		cancelAttempt()
		if err == nil {
			return nil
		}
		select {
		case <-proc.Done():
			return fmt.Errorf("postgres exited during start-up (%v)", proc.Err())
		case <-deadline.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("postgres did not accept connections within %s: %w", timeout, err)
		case <-ticker.C:
		}
	}
}

func createDatabase(ctx context.Context, adminDSN, name string) error {
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return fmt.Errorf("connect to the new server: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := conn.QueryRow(ctx, databaseExistsSQL, pgx.StrictNamedArgs{"name": name}).Scan(&exists); err != nil {
		return fmt.Errorf("look for database %s: %w", name, err)
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database
		return nil
	}
	if err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// freePort picks a free port on 127.0.0.1 (freeport). It never returns
// 5432, where a system server may start later.
func freePort() (int, error) {
	ports, err := freeport.Pick(1, 5432)
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	return ports[0], nil
}

// makeRunDir creates the server's runtime directory: short, so the socket
// path fits, and marked with our pid so a later start can remove it if we die
// without stopping.
func makeRunDir(u osUser) (string, error) {
	base := runDirBase()
	sweepRunDirs(base)
	dir, err := os.MkdirTemp(base, runDirPrefix)
	if err != nil {
		return "", fmt.Errorf("create runtime directory: %w", err)
	}
	if sock := filepath.Join(dir, ".s.PGSQL.65535"); len(sock) > maxSocketPath {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("runtime directory %s is too long for a unix socket path", dir)
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("create runtime directory: %w", err)
	}
	if err := chownTo(dir, u); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("hand the runtime directory to the OS user %s: %w", u.name, err)
	}
	return dir, nil
}

// runDirBase prefers /tmp to $TMPDIR, which can be long enough (macOS) to
// push the socket path past its limit.
func runDirBase() string {
	if runtime.GOOS != "windows" {
		if fi, err := os.Stat("/tmp"); err == nil && fi.IsDir() {
			return "/tmp"
		}
	}
	return os.TempDir()
}

// sweepRunDirs removes runtime directories whose owner died without stopping
// its server: that is the only way temporary clusters of killed test
// binaries get cleaned up.
func sweepRunDirs(base string) {
	dirs, _ := filepath.Glob(filepath.Join(base, runDirPrefix+"*")) // the pattern is valid
	for _, dir := range dirs {
		if runDirAbandoned(dir) {
			_ = os.RemoveAll(dir) // best effort; another user's directory stays
		}
	}
}

func runDirAbandoned(dir string) bool {
	content, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return false // still being set up, or not one of ours
	}
	owner, ok := parsePIDFile(content)
	if !ok || processExists(owner) {
		return false
	}
	// Without Pdeathsig (non-Linux) a server can outlive its owner; leave
	// its files alone while it runs.
	if content, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid")); err == nil {
		if pid, ok := parsePIDFile(content); ok && processExists(pid) {
			return false
		}
	}
	return true
}

// DSN is the URL of the hubctl database, for pgx, psql and
// STREAMING_HUB_POSTGRES_DSN.
func (p *Postgres) DSN() string { return p.DSNFor(hubDatabase) }

// DSNFor is the URL of database db on this server, as user postgres.
func (p *Postgres) DSNFor(db string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User("postgres"),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)),
		Path:     "/" + db,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port is the TCP port the server listens on at 127.0.0.1.
func (p *Postgres) Port() int { return p.port }

// DataDir is the directory holding the cluster.
func (p *Postgres) DataDir() string { return p.dataDir }

// Done is closed when the server process has exited, whether through Stop
// or on its own.
func (p *Postgres) Done() <-chan struct{} { return p.proc.Done() }

// Stop shuts the server down and removes its temporary files. It asks for a
// fast shutdown (sessions are ended, the cluster is left consistent), and
// escalates to an immediate shutdown and then a kill when that takes more
// than 30s, or at once when ctx is done. It may be called more than once;
// later calls return the first result.
func (p *Postgres) Stop(ctx context.Context) error {
	p.stopOnce.Do(func() { p.stopErr = p.stop(ctx) })
	return p.stopErr
}

func (p *Postgres) stop(ctx context.Context) error {
	var errs []error
	if p.proc.Exited() {
		if err := p.proc.Err(); err != nil {
			errs = append(errs, fmt.Errorf("PostgreSQL had already exited: %w", err))
		}
	} else if gentle := p.proc.Stop(ctx.Done(), shutdownSteps...); !gentle {
		errs = append(errs, errors.New("PostgreSQL did not finish a fast shutdown in time and was stopped forcibly"))
	}
	if err := os.RemoveAll(p.runDir); err != nil {
		errs = append(errs, fmt.Errorf("remove PostgreSQL runtime directory: %w", err))
	}
	return errors.Join(errs...)
}

// StopImmediate crashes the server on purpose, with `pg_ctl stop -m
// immediate`: every session ends at once, nothing is checkpointed, and the
// next start runs crash recovery. It is for tests of what survives a
// database crash; Stop still removes the runtime files afterwards.
func (p *Postgres) StopImmediate(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, filepath.Join(p.binDir, "pg_ctl"), "stop", "-D", p.dataDir, "-m", "immediate", "-w")
	cmd.Env = childEnv()
	cmd.Dir = string(filepath.Separator)
	cmd.SysProcAttr = childSysProcAttr(p.user)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl stop -m immediate: %w: %s", err, out)
	}
	select {
	case <-p.proc.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// shutdownSteps escalate from PostgreSQL's fast shutdown (SIGINT: sessions
// are ended and a checkpoint leaves the cluster consistent) to its immediate
// shutdown (crash recovery at next start) before the final SIGKILL.
var shutdownSteps = []childproc.Step{
	{Signal: os.Interrupt, Grace: fastShutdownGrace},
	{Signal: immediateShutdown, Grace: immediateShutdownGrace},
}

// ignoreErrors keeps a caller's log writer from stopping the copy of the
// server's output, which would block the server once the pipe fills.
type ignoreErrors struct{ w io.Writer }

func (w ignoreErrors) Write(p []byte) (int, error) {
	_, _ = w.w.Write(p)
	return len(p), nil
}

//go:embed sql/database_exists.sql
var databaseExistsSQL string
