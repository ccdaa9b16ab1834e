package devenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/hubctl/hubctl/internal/childproc"
)

// osUser is who the server processes run as. The zero value means ourselves.
type osUser struct {
	name     string
	uid, gid uint32
	groups   []uint32
	switchTo bool
}

// errBinariesNotFound explains how to get the server binaries; callers wrap
// it with the places that were searched.
var errBinariesNotFound = errors.New("PostgreSQL binaries not found: install postgresql " +
	"(apt-get install postgresql, brew install postgresql) or put the directory holding initdb and postgres on PATH")

// serverBinaries are what a bin directory must hold to be usable.
var serverBinaries = []string{"initdb", "postgres"}

// findBinDir locates initdb and postgres: override if given, else the
// directory pg_config names, else the newest /usr/lib/postgresql/*/bin
// (Debian installs servers there without putting them on PATH), else PATH.
func findBinDir(ctx context.Context, override string) (string, error) {
	if override != "" {
		if !hasServerBinaries(override) {
			return "", fmt.Errorf("%s does not hold initdb and postgres", override)
		}
		return override, nil
	}
	var candidates []string
	if out, err := exec.CommandContext(ctx, "pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	versioned, _ := filepath.Glob("/usr/lib/postgresql/*/bin") // the pattern is valid, so no error
	candidates = append(candidates, newestFirst(versioned)...)
	if p, err := exec.LookPath("postgres"); err == nil {
		candidates = append(candidates, filepath.Dir(p))
	}
	for _, dir := range candidates {
		if hasServerBinaries(dir) {
			return dir, nil
		}
	}
	if len(candidates) == 0 {
		return "", fmt.Errorf("%w (no pg_config, nothing in /usr/lib/postgresql, no postgres on PATH)", errBinariesNotFound)
	}
	return "", fmt.Errorf("%w (looked in %s)", errBinariesNotFound, strings.Join(candidates, ", "))
}

func hasServerBinaries(dir string) bool {
	for _, name := range serverBinaries {
		if runtime.GOOS == "windows" {
			name += ".exe"
		}
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() || (runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0) {
			return false
		}
	}
	return true
}

// newestFirst orders .../<version>/bin directories by PostgreSQL version,
// newest first, comparing numerically (10 is newer than 9.6). Directories
// whose version does not parse go last, in their original order.
func newestFirst(dirs []string) []string {
	type versioned struct {
		dir     string
		version []int
	}
	var known []versioned
	var unknown []string
	for _, dir := range dirs {
		if v, ok := parseVersion(filepath.Base(filepath.Dir(dir))); ok {
			known = append(known, versioned{dir, v})
		} else {
			unknown = append(unknown, dir)
		}
	}
	slices.SortStableFunc(known, func(a, b versioned) int { return slices.Compare(b.version, a.version) })
	out := make([]string, 0, len(dirs))
	for _, k := range known {
		out = append(out, k.dir)
	}
	return append(out, unknown...)
}

// parseVersion splits a dotted numeric version ("15", "9.6") into numbers.
func parseVersion(s string) ([]int, bool) {
	parts := strings.Split(s, ".")
	nums := make([]int, 0, len(parts))
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, false
		}
		nums = append(nums, n)
	}
	return nums, true
}

// serverMajor extracts the major version, as PG_VERSION spells it, from the
// output of `postgres -V`: "postgres (PostgreSQL) 15.20 (Debian ...)" gives
// "15", "... 9.6.24" gives "9.6", "... 17beta1" gives "17".
func serverMajor(versionOutput string) (string, error) {
	const marker = "(PostgreSQL) "
	_, rest, ok := strings.Cut(versionOutput, marker)
	if !ok {
		return "", fmt.Errorf("unrecognised postgres -V output %q", strings.TrimSpace(versionOutput))
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", fmt.Errorf("unrecognised postgres -V output %q", strings.TrimSpace(versionOutput))
	}
	// Keep the leading digits and dots: "17beta1" is "17", "15.20" stays.
	version := fields[0]
	if end := strings.IndexFunc(version, func(r rune) bool { return (r < '0' || r > '9') && r != '.' }); end >= 0 {
		version = version[:end]
	}
	nums, ok := parseVersion(strings.TrimSuffix(version, "."))
	if !ok || len(nums) == 0 {
		return "", fmt.Errorf("unrecognised postgres -V output %q", strings.TrimSpace(versionOutput))
	}
	if nums[0] >= 10 || len(nums) == 1 {
		return strconv.Itoa(nums[0]), nil
	}
	return fmt.Sprintf("%d.%d", nums[0], nums[1]), nil
}

// initdbArgs creates a cluster reachable without a password from this
// machine only: initdb's trust lines cover the unix socket and loopback, and
// the server listens on nothing else. The C locale keeps collation
// independent of the host's locale settings.
func initdbArgs(dataDir string, ephemeral bool) []string {
	args := []string{
		"-D", dataDir,
		"--username=postgres",
		"--auth=trust",
		"--encoding=UTF8",
		"--locale=C",
	}
	if ephemeral {
		// Skips flushing the new cluster to disk: nothing to keep.
		args = append(args, "--no-sync")
	}
	return args
}

// serverArgs starts postgres on 127.0.0.1 only. Ephemeral servers trade
// crash safety for speed; what they hold is thrown away anyway. They also
// take more connections than the default 100: a test cluster serves many
// hubs side by side (the chaos scenarios share one), each with its pool,
// its LISTEN connections and its lock sessions.
func serverArgs(dataDir, socketDir string, port int, ephemeral bool) []string {
	args := []string{
		"-D", dataDir,
		"-p", strconv.Itoa(port),
		"-k", socketDir,
		"-c", "listen_addresses=127.0.0.1",
	}
	if ephemeral {
		args = append(args,
			"-c", "fsync=off",
			"-c", "synchronous_commit=off",
			"-c", "full_page_writes=off",
			"-c", "max_connections=400",
		)
	}
	return args
}

// isBindFailure reports whether a server log says the port was taken, which
// is worth retrying on another port when we chose the port ourselves.
func isBindFailure(log string) bool {
	return strings.Contains(log, "could not bind") || strings.Contains(log, "could not create any TCP/IP sockets")
}

// canSearch reports whether u may enter a directory with this mode and owner,
// by the classic owner/group/other rule.
func canSearch(perm fs.FileMode, ownerUID, ownerGID uint32, u osUser) bool {
	switch {
	case ownerUID == u.uid:
		return perm&0o100 != 0
	case ownerGID == u.gid || slices.Contains(u.groups, ownerGID):
		return perm&0o010 != 0
	default:
		return perm&0o001 != 0
	}
}

// checkReachable fails when u cannot walk down to dir, which PostgreSQL would
// otherwise report as an obscure "could not change directory" after initdb.
func checkReachable(dir string, u osUser) error {
	if !u.switchTo {
		return nil
	}
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if uid, gid, ok := fileOwner(fi); ok && !canSearch(fi.Mode().Perm(), uid, gid, u) {
			return fmt.Errorf("PostgreSQL runs as the OS user %s (it refuses root) and cannot enter %s on the way to %s: "+
				"choose a data directory it can reach (e.g. under /var/lib) or run as a regular user", u.name, d, dir)
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// chownTo hands path to the server's user, which must own its data and
// socket directories.
func chownTo(path string, u osUser) error {
	if !u.switchTo {
		return nil
	}
	return os.Chown(path, int(u.uid), int(u.gid))
}

// ensureCluster makes sure dataDir holds a cluster of the installed major
// version, creating one when the directory is missing or empty.
func ensureCluster(ctx context.Context, binDir, dataDir string, u osUser, ephemeral bool) error {
	if current, err := os.ReadFile(filepath.Join(dataDir, "PG_VERSION")); err == nil {
		return checkClusterVersion(ctx, binDir, dataDir, strings.TrimSpace(string(current)))
	}
	if entries, err := os.ReadDir(dataDir); err == nil && len(entries) > 0 {
		return fmt.Errorf("data directory %s is not empty but holds no PostgreSQL cluster (no PG_VERSION): "+
			"use an empty or new directory", dataDir)
	}
	if err := os.MkdirAll(filepath.Dir(dataDir), 0o755); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	if err := checkReachable(filepath.Dir(dataDir), u); err != nil {
		return err
	}
	// The cluster counts as existing once PG_VERSION is there, and initdb
	// writes that early: build it aside and move it in when complete.
	staging := dataDir + ".initdb"
	if err := os.RemoveAll(staging); err != nil {
		return fmt.Errorf("remove the leftovers of an interrupted initdb: %w", err)
	}
	if err := os.Mkdir(staging, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	if err := chownTo(staging, u); err != nil {
		_ = os.RemoveAll(staging)
		return fmt.Errorf("hand the data directory to the OS user %s: %w", u.name, err)
	}
	if err := runInitdb(ctx, binDir, staging, u, ephemeral); err != nil {
		_ = os.RemoveAll(staging)
		return err
	}
	// An empty dataDir may already exist (created by the caller); rename
	// cannot replace it everywhere, so remove it first. Remove refuses
	// non-empty directories, which the check above already ruled out.
	if err := os.Remove(dataDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		_ = os.RemoveAll(staging)
		return fmt.Errorf("replace empty data directory: %w", err)
	}
	if err := os.Rename(staging, dataDir); err != nil {
		_ = os.RemoveAll(staging)
		return fmt.Errorf("move the new cluster into place: %w", err)
	}
	return nil
}

func runInitdb(ctx context.Context, binDir, dataDir string, u osUser, ephemeral bool) error {
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "initdb"), initdbArgs(dataDir, ephemeral)...)
	cmd.Env = childEnv()
	cmd.Dir = string(filepath.Separator) // our working directory may be closed to the server's user
	cmd.SysProcAttr = childSysProcAttr(u)
	out := newTailBuffer(logTailBytes)
	cmd.Stdout, cmd.Stderr = out, out
	proc, err := childproc.Start(cmd)
	if err != nil {
		return fmt.Errorf("run initdb: %w", err)
	}
	<-proc.Done()
	if err := proc.Err(); err != nil {
		return fmt.Errorf("initdb failed: %w\n%s", err, out.lastLines(logTailLines))
	}
	return nil
}

// checkClusterVersion refuses to start binaries of another major version on
// an existing cluster, which postgres would do with a less direct message.
func checkClusterVersion(ctx context.Context, binDir, dataDir, clusterMajor string) error {
	out, err := exec.CommandContext(ctx, filepath.Join(binDir, "postgres"), "-V").Output()
	if err != nil {
		return fmt.Errorf("run postgres -V: %w", err)
	}
	binMajor, err := serverMajor(string(out))
	if err != nil {
		return err
	}
	if binMajor != clusterMajor {
		return fmt.Errorf("data directory %s holds a PostgreSQL %s cluster but the binaries in %s are PostgreSQL %s: "+
			"install PostgreSQL %s, or move the directory away to start afresh", dataDir, clusterMajor, binDir, binMajor, clusterMajor)
	}
	return nil
}

// clearStalePID removes the postmaster.pid a killed server left behind when
// its pid now belongs to some other process, which postgres would take for a
// running server. A pid file of a server still running on this data
// directory is an error: two servers must not share one.
func clearStalePID(dataDir string) error {
	pidFile := filepath.Join(dataDir, "postmaster.pid")
	content, err := os.ReadFile(pidFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", pidFile, err)
	}
	if pid, ok := parsePIDFile(content); ok && processExists(pid) {
		cwd, known := processWorkingDir(pid)
		if !known {
			// Without a way to tell, leave the decision to postgres, whose
			// own check errs on the side of not starting twice.
			return nil
		}
		if sameDir(cwd, dataDir) {
			return fmt.Errorf("a PostgreSQL server (pid %d) is already running on data directory %s: stop it first", pid, dataDir)
		}
	}
	if err := os.Remove(pidFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale %s: %w", pidFile, err)
	}
	return nil
}

// parsePIDFile reads the pid on the first line of a pid file such as
// postmaster.pid, in which a single-user backend writes its pid negated.
func parsePIDFile(content []byte) (int, bool) {
	first, _, _ := bytes.Cut(content, []byte("\n"))
	pid, err := strconv.Atoi(strings.TrimSpace(string(first)))
	if err != nil {
		return 0, false
	}
	if pid < 0 {
		pid = -pid
	}
	// Zero, and the one negative number whose negation overflows, name no
	// process; passed to kill they would name process groups.
	if pid <= 0 {
		return 0, false
	}
	return pid, true
}

func sameDir(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}

// childEnv fixes the language of server and initdb messages, which we match
// on (isBindFailure) and quote in errors.
func childEnv() []string {
	return append(os.Environ(), "LC_ALL=C")
}
