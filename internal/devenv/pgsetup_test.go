package devenv

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestNewestFirst(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{name: "none", in: nil, want: []string{}},
		{
			name: "numeric not lexical order",
			in:   []string{"/usr/lib/postgresql/9.6/bin", "/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/10/bin"},
			want: []string{"/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/10/bin", "/usr/lib/postgresql/9.6/bin"},
		},
		{
			name: "unparsable versions last, in input order",
			in:   []string{"/usr/lib/postgresql/dev/bin", "/usr/lib/postgresql/13/bin", "/usr/lib/postgresql/x.1/bin"},
			want: []string{"/usr/lib/postgresql/13/bin", "/usr/lib/postgresql/dev/bin", "/usr/lib/postgresql/x.1/bin"},
		},
		{
			name: "minor versions compared",
			in:   []string{"/opt/pg/9.5/bin", "/opt/pg/9.6/bin"},
			want: []string{"/opt/pg/9.6/bin", "/opt/pg/9.5/bin"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newestFirst(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("newestFirst(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestServerMajor(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{in: "postgres (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)\n", want: "15"},
		{in: "postgres (PostgreSQL) 16.4\n", want: "16"},
		{in: "postgres (PostgreSQL) 9.6.24\n", want: "9.6"},
		{in: "postgres (PostgreSQL) 17beta1\n", want: "17"},
		{in: "postgres (PostgreSQL) 18devel", want: "18"},
		{in: "postgres (PostgreSQL) 10.23", want: "10"},
		{in: "postgres (PostgreSQL) ", wantErr: true},
		{in: "postgres (PostgreSQL) beta", wantErr: true},
		{in: "something else 15.1", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := serverMajor(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("serverMajor(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParsePIDFile(t *testing.T) {
	tests := []struct {
		in     string
		want   int
		wantOK bool
	}{
		{in: "4242\n/var/lib/pg\n1700000000\n5432\n", want: 4242, wantOK: true},
		{in: "4242", want: 4242, wantOK: true},
		{in: " 17 \n", want: 17, wantOK: true},
		{in: "-4242\n", want: 4242, wantOK: true}, // single-user backend
		{in: "0\n"},
		{in: "-9223372036854775808\n"},
		{in: "99999999999999999999\n"},
		{in: "\n4242\n"},
		{in: "abc\n"},
		{in: ""},
	}
	for _, tt := range tests {
		got, ok := parsePIDFile([]byte(tt.in))
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("parsePIDFile(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestInitdbArgs(t *testing.T) {
	for _, ephemeral := range []bool{false, true} {
		args := initdbArgs("/data", ephemeral)
		for _, want := range []string{"--username=postgres", "--auth=trust", "--encoding=UTF8"} {
			if !slices.Contains(args, want) {
				t.Errorf("initdbArgs(ephemeral=%v) = %q, missing %q", ephemeral, args, want)
			}
		}
		if got := slices.Contains(args, "--no-sync"); got != ephemeral {
			t.Errorf("initdbArgs(ephemeral=%v) has --no-sync = %v", ephemeral, got)
		}
	}
}

func TestServerArgs(t *testing.T) {
	unsafeSettings := []string{"fsync=off", "synchronous_commit=off", "full_page_writes=off"}
	for _, ephemeral := range []bool{false, true} {
		args := serverArgs("/data", "/tmp/run", 54321, ephemeral)
		settings := map[string]bool{}
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-c" {
				settings[args[i+1]] = true
			}
		}
		if !settings["listen_addresses=127.0.0.1"] {
			t.Errorf("serverArgs(ephemeral=%v) = %q: must listen on loopback only", ephemeral, args)
		}
		if !slices.Equal(args[:6], []string{"-D", "/data", "-p", "54321", "-k", "/tmp/run"}) {
			t.Errorf("serverArgs(ephemeral=%v) = %q: wrong data dir, port or socket dir", ephemeral, args)
		}
		for _, s := range unsafeSettings {
			if settings[s] != ephemeral {
				t.Errorf("serverArgs(ephemeral=%v): %s present = %v", ephemeral, s, settings[s])
			}
		}
	}
}

func TestIsBindFailure(t *testing.T) {
	tests := []struct {
		log  string
		want bool
	}{
		{log: `LOG:  could not bind IPv4 address "127.0.0.1": Address already in use`, want: true},
		{log: "WARNING:  could not create listen socket for \"127.0.0.1\"\nFATAL:  could not create any TCP/IP sockets", want: true},
		{log: "FATAL:  data directory \"/x\" has wrong ownership"},
		{log: ""},
	}
	for _, tt := range tests {
		if got := isBindFailure(tt.log); got != tt.want {
			t.Errorf("isBindFailure(%q) = %v, want %v", tt.log, got, tt.want)
		}
	}
}

func TestCanSearch(t *testing.T) {
	pg := osUser{name: "postgres", uid: 101, gid: 104, groups: []uint32{103}, switchTo: true}
	tests := []struct {
		name     string
		perm     fs.FileMode
		uid, gid uint32
		want     bool
	}{
		{name: "owner with x", perm: 0o700, uid: 101, gid: 0, want: true},
		{name: "owner without x, others with x", perm: 0o601, uid: 101, gid: 0, want: false},
		{name: "primary group with x", perm: 0o750, uid: 0, gid: 104, want: true},
		{name: "supplementary group with x", perm: 0o750, uid: 0, gid: 103, want: true},
		{name: "group without x", perm: 0o705, uid: 0, gid: 104, want: false},
		{name: "other with x", perm: 0o711, uid: 0, gid: 0, want: true},
		{name: "root private home", perm: 0o700, uid: 0, gid: 0, want: false},
	}
	for _, tt := range tests {
		if got := canSearch(tt.perm, tt.uid, tt.gid, pg); got != tt.want {
			t.Errorf("%s: canSearch(%o, %d, %d) = %v, want %v", tt.name, tt.perm, tt.uid, tt.gid, got, tt.want)
		}
	}
}

func TestEnsureClusterRefusesForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := ensureCluster(t.Context(), "/nonexistent", dir, osUser{}, true)
	if err == nil || !strings.Contains(err.Error(), "no PG_VERSION") {
		t.Fatalf("ensureCluster on a non-empty non-cluster directory = %v, want a no PG_VERSION error", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Errorf("the directory's contents were touched: %v", err)
	}
}

func TestClearStalePID(t *testing.T) {
	t.Run("dead pid is removed", func(t *testing.T) {
		dir := t.TempDir()
		writePIDFile(t, dir, deadPID(t))
		if err := clearStalePID(dir); err != nil {
			t.Fatal(err)
		}
		assertNoPIDFile(t, dir)
	})
	t.Run("pid reused by another process is removed", func(t *testing.T) {
		if _, ok := processWorkingDir(os.Getpid()); !ok {
			t.Skip("no way to tell which directory a process serves on this system")
		}
		dir := t.TempDir()
		writePIDFile(t, dir, os.Getpid()) // alive, but not serving dir
		if err := clearStalePID(dir); err != nil {
			t.Fatal(err)
		}
		assertNoPIDFile(t, dir)
	})
	t.Run("running server on the directory is an error", func(t *testing.T) {
		if _, ok := processWorkingDir(os.Getpid()); !ok {
			t.Skip("no way to tell which directory a process serves on this system")
		}
		// We stand in for the postmaster: like it, we work in the data
		// directory its pid file names.
		dir := t.TempDir()
		t.Chdir(dir)
		writePIDFile(t, dir, os.Getpid())
		if err := clearStalePID(dir); err == nil || !strings.Contains(err.Error(), "already running") {
			t.Fatalf("clearStalePID = %v, want an already running error", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); err != nil {
			t.Errorf("the running server's pid file was touched: %v", err)
		}
	})
	t.Run("no pid file", func(t *testing.T) {
		if err := clearStalePID(t.TempDir()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestRunDirAbandoned(t *testing.T) {
	tests := []struct {
		name  string
		owner string // content of owner.pid; "" means no file
		want  bool
	}{
		{name: "owner alive", owner: strconv.Itoa(os.Getpid()), want: false},
		{name: "owner dead", owner: "dead", want: true},
		{name: "no owner file yet", owner: "", want: false},
		{name: "garbage owner file", owner: "not a pid", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			owner := tt.owner
			if owner == "dead" {
				owner = strconv.Itoa(deadPID(t))
			}
			if owner != "" {
				if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := runDirAbandoned(dir); got != tt.want {
				t.Errorf("runDirAbandoned = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLastLines(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		n         int
		truncated bool
		want      string
	}{
		{name: "fewer lines than asked", text: "a\nb\n", n: 5, want: "a\nb"},
		{name: "last n", text: "a\nb\nc\nd\n", n: 2, want: "c\nd"},
		{name: "no trailing newline", text: "a\nb", n: 1, want: "b"},
		{name: "truncated drops partial first line", text: "tial\nb\nc", n: 5, truncated: true, want: "b\nc"},
		{name: "truncated single partial line", text: "partial", n: 5, truncated: true, want: ""},
		{name: "empty", text: "", n: 3, want: ""},
		{name: "zero lines", text: "a\n", n: 0, want: ""},
	}
	for _, tt := range tests {
		if got := lastLines(tt.text, tt.n, tt.truncated); got != tt.want {
			t.Errorf("%s: lastLines(%q, %d, %v) = %q, want %q", tt.name, tt.text, tt.n, tt.truncated, got, tt.want)
		}
	}
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	tb := newTailBuffer(16)
	for _, chunk := range []string{"first line\n", "second\n", "third\n", "a very long fourth line\n", "fifth\n"} {
		if n, err := tb.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", chunk, n, err)
		}
	}
	if got, want := tb.lastLines(10), "fifth"; got != want {
		t.Errorf("lastLines = %q, want %q", got, want)
	}
	tb = newTailBuffer(64)
	_, _ = tb.Write([]byte("one\ntwo\n"))
	if got, want := tb.lastLines(10), "one\ntwo"; got != want {
		t.Errorf("lastLines of an unfilled buffer = %q, want %q", got, want)
	}
}

func writePIDFile(t *testing.T, dir string, pid int) {
	t.Helper()
	content := strconv.Itoa(pid) + "\n" + dir + "\n1700000000\n5432\n"
	if err := os.WriteFile(filepath.Join(dir, "postmaster.pid"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func assertNoPIDFile(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("postmaster.pid still there (stat: %v)", err)
	}
}
