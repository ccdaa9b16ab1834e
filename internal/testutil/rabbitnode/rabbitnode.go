// Package rabbitnode gives a test a private RabbitMQ node of its own, started
// from the installed binaries, that the test may stop, start and restart
// without disturbing the machine's broker or other tests.
//
// # Isolation
//
// Each node has a unique name (hubctl-<random>@localhost), listens for AMQP
// on 127.0.0.1 only, and keeps its data, logs, configuration and Erlang
// cookie in the test's temporary directory: HOME points there, so neither
// ~/.erlang.cookie nor the system broker's /var/lib/rabbitmq is read or
// written. It registers with an epmd of its own on a private port rather
// than the machine's, which would otherwise be started as a daemon that
// outlives the test when none runs. No plugin is enabled; guest/guest may
// connect from loopback. The inherited RABBITMQ_* and ERL_* settings, and
// /etc/rabbitmq's files, are ignored.
//
// The ports are picked below the kernel's ephemeral range: while a node is
// down, a client redialling its AMQP port could otherwise be handed that
// very port as its source and connect to itself, taking the port from the
// node about to restart.
//
// # Lifetime
//
// The node runs in the foreground as a child of the test binary, in a
// process group of its own; on Linux the kernel kills it (and epmd) should
// the test binary die without cleaning up, as on a test timeout. Stop asks
// for RabbitMQ's graceful shutdown (SIGTERM); Start brings the node back on
// the same ports and data, so durable queues and persistent messages
// survive. When the test ends, the node and epmd are killed, whatever state
// they are in.
//
// # Speed
//
// On an idle 2-CPU machine a start takes 5-6s, first or not, and a graceful
// stop 1.1s; on a loaded one twice that. Most of it is Erlang loading
// RabbitMQ's modules, which no setting avoids, so tests should restart a
// node only as often as they must.
//
// # Binaries
//
// The server script is HUBCTL_TEST_RABBITMQ_SERVER when set, else Debian's
// /usr/lib/rabbitmq/bin/rabbitmq-server, else rabbitmq-server on PATH (but
// not Debian's /usr/sbin wrapper, which switches to the rabbitmq user and
// writes to /var/log). erl and epmd must be installed. Without them tests
// skip, or fail when CI=true.
package rabbitnode

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hubctl/hubctl/internal/freeport"
)

// EnvServer names the rabbitmq-server script to run instead of the
// installed one.
const EnvServer = "HUBCTL_TEST_RABBITMQ_SERVER"

const (
	// startTimeout bounds a start, from spawning the node to its first
	// AMQP handshake; a healthy one takes seconds, a loaded CI machine more.
	startTimeout = 2 * time.Minute
	// stopGrace bounds a graceful shutdown before the node is killed.
	stopGrace = time.Minute
	// pollInterval paces readiness checks.
	pollInterval = 50 * time.Millisecond
	// portAttempts is how often a first start is retried on fresh ports
	// when one was taken between picking and binding it.
	portAttempts = 3
	// logTailLines is how much of the node's log a failure quotes.
	logTailLines = 40
	// debianServer is the script Debian's /usr/sbin wrapper runs.
	debianServer = "/usr/lib/rabbitmq/bin/rabbitmq-server"
	installHint  = "install RabbitMQ with `apt-get install -y rabbitmq-server` (the system service need not run), " +
		"or name the rabbitmq-server script in " + EnvServer
)

// Node is one private RabbitMQ node. Its methods are safe for concurrent
// use and may be called from any goroutine.
type Node struct {
	name string // Erlang node name
	dir  string
	bins binaries
	logf func(format string, args ...any)

	// Fixed at the first start, so that clients find a restarted node
	// where they left it.
	amqpPort, distPort, epmdPort int
	env                          []string

	mu      sync.Mutex
	epmd    *process
	node    *process // nil while stopped
	cleaned bool
}

// Start starts a node for t and waits until it answers AMQP. The node is
// killed and its files removed when t ends, even if t fails.
func Start(t testing.TB) *Node {
	t.Helper()
	bins, err := findBinaries()
	if err != nil {
		msg := fmt.Sprintf("rabbitnode: %v; %s", err, installHint)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	suffix, err := randomToken(8, "0123456789abcdefghijklmnopqrstuvwxyz")
	if err != nil {
		t.Fatalf("rabbitnode: %v", err)
	}
	n := &Node{name: "hubctl-" + suffix + "@localhost", dir: dir, bins: bins, logf: t.Logf}
	// Registered after t.TempDir's removal, so it runs before it.
	t.Cleanup(func() {
		n.cleanup()
		if t.Failed() {
			t.Logf("rabbitnode: last lines of %s's log:\n%s", n.name, n.logTail())
		}
	})
	if err := n.prepare(); err != nil {
		t.Fatalf("rabbitnode: %v", err)
	}
	for attempt := 1; ; attempt++ {
		err := n.firstStart()
		if err == nil {
			return n
		}
		if attempt < portAttempts && errors.Is(err, errPortTaken) {
			continue
		}
		t.Fatalf("rabbitnode: %v", err)
	}
}

// URL is the node's AMQP URL for guest/guest on the default virtual host.
func (n *Node) URL() string {
	return "amqp://guest:guest@" + n.Addr() + "/"
}

// Addr is the node's AMQP listener, 127.0.0.1:port.
func (n *Node) Addr() string { return "127.0.0.1:" + strconv.Itoa(n.amqpPort) }

// Name is the Erlang node name.
func (n *Node) Name() string { return n.name }

// Stop shuts the node down gracefully, as `rabbitmqctl stop` would, and
// returns once its process has exited; a node that takes longer than a
// minute is killed and Stop reports it. Clients see their connections
// closed by the broker, and new connections refused. Stopping a stopped
// node does nothing.
func (n *Node) Stop() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cleaned {
		return errors.New("node already cleaned up")
	}
	if n.node == nil {
		return nil
	}
	began := time.Now()
	proc := n.node
	n.node = nil
	crashed := proc.Exited()
	gentle := proc.stopAndSweep(syscall.SIGTERM, stopGrace) // also sweeps what a crash left
	if crashed {
		return fmt.Errorf("node %s had exited on its own (%v)", n.name, proc.Err())
	}
	if !gentle {
		return fmt.Errorf("node %s did not shut down within %s and was killed", n.name, stopGrace)
	}
	n.logf("rabbitnode: %s stopped in %s", n.name, time.Since(began).Round(time.Millisecond))
	return nil
}

// Start starts a stopped node on its old ports and data and waits until it
// answers AMQP. Starting a running node does nothing.
func (n *Node) Start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cleaned {
		return errors.New("node already cleaned up")
	}
	if n.node != nil {
		if !n.node.Exited() {
			return nil
		}
		n.node.stopAndSweep(syscall.SIGKILL, stopGrace) // sweeps what the crash left
		n.node = nil
	}
	return n.launch()
}

// Restart stops the node gracefully and starts it again.
func (n *Node) Restart() error {
	if err := n.Stop(); err != nil {
		return err
	}
	return n.Start()
}

// binaries are the programs a node needs.
type binaries struct {
	server string // the rabbitmq-server script
	epmd   string
}

func findBinaries() (binaries, error) {
	if !processGroups {
		return binaries{}, errors.New("rabbitnode runs nodes on unix systems only")
	}
	server, err := findServer()
	if err != nil {
		return binaries{}, err
	}
	erl, err := exec.LookPath("erl")
	if err != nil {
		return binaries{}, errors.New("erl (Erlang) is not on PATH")
	}
	epmd, err := exec.LookPath("epmd")
	if err != nil {
		// Some installs put only erl on PATH; epmd sits beside the real one.
		resolved, rerr := filepath.EvalSymlinks(erl)
		if rerr != nil || !isExecutable(filepath.Join(filepath.Dir(resolved), "epmd")) {
			return binaries{}, errors.New("epmd (Erlang) is not on PATH")
		}
		epmd = filepath.Join(filepath.Dir(resolved), "epmd")
	}
	return binaries{server: server, epmd: epmd}, nil
}

func findServer() (string, error) {
	if named := os.Getenv(EnvServer); named != "" {
		if !isExecutable(named) {
			return "", fmt.Errorf("%s=%s is not an executable file", EnvServer, named)
		}
		return named, nil
	}
	if isExecutable(debianServer) {
		return debianServer, nil
	}
	found, err := exec.LookPath("rabbitmq-server")
	if err != nil {
		return "", errors.New("no rabbitmq-server script found")
	}
	if resolved, err := filepath.EvalSymlinks(found); err == nil && filepath.Base(resolved) == "rabbitmq-script-wrapper" {
		return "", fmt.Errorf("%s is Debian's wrapper, which runs the node as the rabbitmq user, and %s is missing", found, debianServer)
	}
	return found, nil
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}

// prepare writes what every start of the node reads: its cookie, plugin
// list and environment file.
func (n *Node) prepare() error {
	home := filepath.Join(n.dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	// Erlang refuses a cookie file others can read.
	cookie, err := randomToken(32, "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(home, ".erlang.cookie"), []byte(cookie), 0o400); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(n.dir, "enabled_plugins"), []byte("[].\n"), 0o600); err != nil {
		return err
	}
	// An empty environment file stands in for /etc/rabbitmq/rabbitmq-env.conf,
	// which names the system broker's node and ports.
	return os.WriteFile(filepath.Join(n.dir, "rabbitmq-env.conf"), nil, 0o600)
}

// errPortTaken is a start that failed because a picked port was taken in
// the meantime.
var errPortTaken = errors.New("a port was taken by another process")

// firstStart picks the node's ports and starts epmd and the node on them.
func (n *Node) firstStart() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.stopEpmdLocked()
	ports, err := freeport.Pick(3)
	if err != nil {
		return err
	}
	n.amqpPort, n.distPort, n.epmdPort = ports[0], ports[1], ports[2]
	// A failed attempt's logs would be taken for this one's, and its
	// half-made database would be recovered instead of created.
	for _, stale := range []string{n.consolePath(), filepath.Join(n.dir, "log"), filepath.Join(n.dir, "mnesia")} {
		if err := os.RemoveAll(stale); err != nil {
			return err
		}
	}
	if err := n.writeConfig(); err != nil {
		return err
	}
	n.env = nodeEnv(os.Environ(), n.settings())
	if err := n.startEpmdLocked(); err != nil {
		return err
	}
	return n.launch()
}

// writeConfig writes rabbitmq.conf, which replaces /etc/rabbitmq's.
func (n *Node) writeConfig() error {
	conf := strings.Join([]string{
		"listeners.tcp.1 = 127.0.0.1:" + strconv.Itoa(n.amqpPort),
		"loopback_users.guest = true",
		// A nearly full CI disk must not raise the disk alarm, which
		// blocks publishers and would pass for a client bug.
		"disk_free_limit.absolute = 1MB",
		// The file log is enough; the console would write it twice.
		"log.console = false",
		"log.file.level = info",
		"",
	}, "\n")
	return os.WriteFile(filepath.Join(n.dir, "rabbitmq.conf"), []byte(conf), 0o600)
}

// settings are the environment variables that make the node private.
func (n *Node) settings() map[string]string {
	return map[string]string{
		"HOME":                          filepath.Join(n.dir, "home"),
		"RABBITMQ_NODENAME":             n.name,
		"RABBITMQ_DIST_PORT":            strconv.Itoa(n.distPort),
		"RABBITMQ_CONF_ENV_FILE":        filepath.Join(n.dir, "rabbitmq-env.conf"),
		"RABBITMQ_CONFIG_FILE":          filepath.Join(n.dir, "rabbitmq.conf"),
		"RABBITMQ_ADVANCED_CONFIG_FILE": filepath.Join(n.dir, "advanced.config"),
		"RABBITMQ_ENABLED_PLUGINS_FILE": filepath.Join(n.dir, "enabled_plugins"),
		"RABBITMQ_MNESIA_BASE":          filepath.Join(n.dir, "mnesia"),
		"RABBITMQ_LOG_BASE":             filepath.Join(n.dir, "log"),
		// The script then execs the VM instead of keeping a shell between
		// us and it: our process is the node, and SIGTERM and the
		// parent-death signal reach it. -noinput keeps the shell it would
		// allow closed.
		"RABBITMQ_ALLOW_INPUT":                "true",
		"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": "-noinput -kernel inet_dist_use_interface {127,0,0,1}",
		"ERL_EPMD_PORT":                       strconv.Itoa(n.epmdPort),
		"ERL_EPMD_ADDRESS":                    "127.0.0.1",
	}
}

// nodeEnv is base without what could point the node at the system broker's
// files, ports or service manager, plus settings.
func nodeEnv(base []string, settings map[string]string) []string {
	env := make([]string, 0, len(base)+len(settings))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if _, overridden := settings[name]; overridden ||
			strings.HasPrefix(name, "RABBITMQ_") || strings.HasPrefix(name, "ERL_") ||
			name == "NOTIFY_SOCKET" { // systemd's: the node would report readiness to it
			continue
		}
		env = append(env, kv)
	}
	for name, value := range settings {
		env = append(env, name+"="+value)
	}
	return env
}

func (n *Node) startEpmdLocked() error {
	cmd := exec.Command(n.bins.epmd, "-port", strconv.Itoa(n.epmdPort), "-address", "127.0.0.1")
	cmd.Env = n.env
	cmd.Dir = n.dir
	cmd.SysProcAttr = childSysProcAttr()
	out, err := os.OpenFile(filepath.Join(n.dir, "epmd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer out.Close() // the child has its own copy
	cmd.Stdout, cmd.Stderr = out, out
	proc, err := startProcess(cmd)
	if err != nil {
		return fmt.Errorf("start epmd: %w", err)
	}
	n.epmd = proc
	deadline := time.Now().Add(startTimeout)
	for !canConnect(n.epmdPort) {
		if proc.Exited() {
			// epmd exits at once when its port is taken.
			return fmt.Errorf("epmd on port %d exited (%v): %w", n.epmdPort, proc.Err(), errPortTaken)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("epmd did not listen on port %d within %s", n.epmdPort, startTimeout)
		}
		time.Sleep(pollInterval)
	}
	return nil
}

func (n *Node) stopEpmdLocked() {
	if n.epmd != nil {
		n.epmd.stopAndSweep(syscall.SIGKILL, stopGrace)
		n.epmd = nil
	}
}

// launch starts the node process and waits until it answers AMQP.
func (n *Node) launch() error {
	began := time.Now()
	cmd := exec.Command(n.bins.server)
	cmd.Env = n.env
	cmd.Dir = n.dir
	cmd.SysProcAttr = childSysProcAttr()
	out, err := os.OpenFile(n.consolePath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer out.Close() // the child has its own copy
	cmd.Stdout, cmd.Stderr = out, out
	proc, err := startProcess(cmd)
	if err != nil {
		return fmt.Errorf("start %s: %w", n.bins.server, err)
	}
	if err := waitAMQP(proc, n.URL(), startTimeout); err != nil {
		proc.stopAndSweep(syscall.SIGKILL, stopGrace)
		tail := n.logTail()
		if portConflict(tail) {
			err = fmt.Errorf("%w: %w", err, errPortTaken)
		}
		return fmt.Errorf("node %s: %w\n%s", n.name, err, tail)
	}
	n.node = proc
	n.logf("rabbitnode: %s answered AMQP on %s %s after spawning", n.name, n.Addr(), time.Since(began).Round(time.Millisecond))
	return nil
}

// waitAMQP polls until guest completes an AMQP handshake, the process
// exits, or timeout passes.
func waitAMQP(proc *process, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		conn, err := amqp.DialConfig(url, amqp.Config{Dial: amqp.DefaultDial(time.Second)})
		if err == nil {
			_ = conn.Close()
			return nil
		}
		if proc.Exited() {
			return fmt.Errorf("exited during start-up (%v)", proc.Err())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no AMQP handshake within %s: %w", timeout, err)
		}
		time.Sleep(pollInterval)
	}
}

// portConflict reports whether a node's log says it could not bind a port.
func portConflict(log string) bool {
	return strings.Contains(log, "eaddrinuse") || strings.Contains(log, "dist_port_already_used")
}

// cleanup kills the node and epmd for good.
func (n *Node) cleanup() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cleaned = true
	if n.node != nil {
		// The data goes with the test, so nothing is gained by a graceful
		// shutdown but time.
		n.node.stopAndSweep(syscall.SIGKILL, stopGrace)
		n.node = nil
	}
	n.stopEpmdLocked()
}

func (n *Node) consolePath() string { return filepath.Join(n.dir, "console.log") }

// logTail is the end of the node's console output (start-up failures land
// there) and of its log file.
func (n *Node) logTail() string {
	var b strings.Builder
	for _, path := range []string{n.consolePath(), filepath.Join(n.dir, "log", n.name+".log")} {
		data, err := os.ReadFile(path)
		if err != nil || len(data) == 0 {
			continue
		}
		fmt.Fprintf(&b, "--- %s\n%s\n", path, lastLines(string(data), logTailLines))
	}
	return b.String()
}

// lastLines returns up to n lines from the end of text.
func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// randomToken is n characters drawn from alphabet.
func randomToken(n int, alphabet string) (string, error) {
	raw := make([]byte, n)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	for i, b := range raw {
		raw[i] = alphabet[int(b)%len(alphabet)]
	}
	return string(raw), nil
}
