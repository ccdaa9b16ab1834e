package quickstart_test

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/profile"
	"github.com/hubctl/hubctl/internal/testutil/wait"
)

// readmePath is the repository's README, from this package's directory.
const readmePath = "../../../README.md"

// patience bounds every wait on the running hub: generous, since CI
// machines are slow and dev mode starts PostgreSQL.
const patience = 90 * time.Second

var (
	exportLine    = regexp.MustCompile(`export HUBCTL_SERVER=(\S+) HUBCTL_TOKEN=(\S+)`)
	brokersLine   = regexp.MustCompile(`Kafka brokers\s+(\S+)`)
	listeningLine = regexp.MustCompile(`Listening on (http://\S+)`)
)

// The README is written for a person on a fresh machine: fixed ports and
// the default data directory. The test runs the same lines with only these
// changes, so that it can run beside anything else in CI: dev and listen
// bind free ports (and dev a temporary directory, so its context is named
// dev-<kafka port> rather than dev), the addresses the README assumes are
// replaced with the ones actually bound, the terminals share a temporary
// profile directory instead of ~/.config, and <subscription-id> is the id
// subs create printed. Every other word of each line is run as written.
const (
	readmeReceiver = "http://127.0.0.1:9000"
	placeholderSub = "<subscription-id>"
)

// session is the state the quickstart's terminals share.
type session struct {
	t        *testing.T
	dataDir  string
	env      map[string]string // what the export line set
	brokers  string
	receiver string   // listen's URL
	lastSub  string   // the id the latest subs create printed
	produced []string // the event ids events produce printed, in order
	dev      *clitest.Process
	listen   *clitest.Process
	pull     *clitest.Process
}

// TestReadmeQuickstart runs every line of the README's quickstart and
// checks what the README promises: the receiver prints the webhook
// delivery with verdict ok, and pull --follow shows the pulled event. It
// goes on with what the README says about failures: a receiver failing
// every delivery sees the retries as one event id under new delivery ids,
// the exhausted delivery is a dead letter, and a replay delivers it.
func TestReadmeQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and the whole hub")
	}
	blocks := quickstartBlocks(t)
	if len(blocks) != 4 {
		t.Fatalf("the quickstart has %d sh blocks; this test knows the 4 of hub, receiver, webhook and pull", len(blocks))
	}
	// Every terminal shares one profile directory, as one user's terminals
	// share ~/.config: dev's context is all they have to find the hub.
	s := &session{t: t, dataDir: reachableTempDir(t), env: map[string]string{profile.EnvConfigDir: t.TempDir()}}
	for _, block := range blocks {
		for _, line := range block {
			s.runLine(line)
		}
	}
	if len(s.produced) != 2 || s.listen == nil || s.pull == nil {
		t.Fatalf("the quickstart should start listen and pull --follow and produce two events; it produced %v", s.produced)
	}

	webhookEvent, pulledEvent := s.produced[0], s.produced[1]
	delivered := regexp.MustCompile(`transaction\.posted event=` + regexp.QuoteMeta(webhookEvent) + ` delivery=\S+ ok`)
	s.waitFor("the webhook delivery in hubctl listen", func() bool { return delivered.MatchString(s.listen.Stdout()) })
	s.waitFor("the pulled event in hubctl pull --follow", func() bool { return strings.Contains(s.pull.Stdout(), pulledEvent) })

	s.retriesAndReplay()
}

// runLine runs one README line as the shell would, with the changes listed
// above.
func (s *session) runLine(line string) {
	t := s.t
	t.Helper()
	if strings.HasPrefix(line, "export ") {
		s.export(line)
		return
	}
	words, err := shellWords(strings.ReplaceAll(line, placeholderSub, s.lastSub))
	if err != nil {
		t.Fatalf("README line %q: %v", line, err)
	}
	if len(words) == 0 {
		return
	}
	switch {
	case slices.Equal(words, []string{"make", "dev"}):
		s.startDev()
		return
	case words[0] != "hubctl":
		t.Fatalf("README line %q: the quickstart may only run make dev, export and hubctl", line)
	case s.dev == nil:
		t.Fatalf("README line %q comes before make dev", line)
	}
	args := make([]string, 0, len(words))
	for _, w := range words[1:] {
		w = strings.ReplaceAll(w, readmeReceiver, s.receiver)
		args = append(args, w)
	}
	switch {
	case args[0] == "listen":
		s.listen = clitest.Start(t, s.env, append(args, "--addr", "127.0.0.1:0")...)
		s.receiver = s.await("hubctl listen's address", s.listen, listeningLine)
	case args[0] == "pull" && slices.Contains(args, "--follow"):
		s.pull = clitest.Start(t, s.env, args...)
	default:
		res := clitest.Run(t, s.env, args...)
		if res.Code != 0 {
			t.Fatalf("README line %q exited %d:\n%s%s", line, res.Code, res.Stdout, res.Stderr)
		}
		s.remember(args, res.Stdout)
	}
}

// remember keeps what later lines refer to: a created subscription's id
// and a produced event's id.
func (s *session) remember(args []string, stdout string) {
	switch {
	case len(args) > 1 && args[0] == "subs" && args[1] == "create":
		var created struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(stdout), &created); err != nil || created.ID == "" {
			s.t.Fatalf("subs create printed no id: %v\n%s", err, stdout)
		}
		s.lastSub = created.ID
	case len(args) > 1 && args[0] == "events" && args[1] == "produce":
		s.produced = append(s.produced, strings.TrimSpace(stdout))
	}
}

func (s *session) startDev() {
	s.dev = clitest.Start(s.t, s.env, "dev", "--data-dir", s.dataDir, "--kafka-port", "0", "--postgres-port", "0", "--listen", "127.0.0.1:0")
	s.t.Cleanup(func() { s.dev.Stop(patience) })
	s.await("hubctl dev's banner", s.dev, exportLine)
	s.brokers = brokersLine.FindStringSubmatch(s.dev.Stderr())[1]
	_, port, err := net.SplitHostPort(strings.Split(s.brokers, ",")[0])
	if err != nil {
		s.t.Fatalf("hubctl dev printed brokers %q: %v", s.brokers, err)
	}
	if want := `Context "dev-` + port + `" is current`; !strings.Contains(s.dev.Stderr(), want) {
		s.t.Fatalf("hubctl dev did not store its context (%s):\n%s", want, s.dev.Stderr())
	}
}

// export takes the README's export line at its word: it must set the two
// variables the banner prints, and gets the banner's values.
func (s *session) export(line string) {
	if s.dev == nil {
		s.t.Fatalf("README line %q comes before make dev", line)
	}
	if !strings.HasPrefix(line, "export HUBCTL_SERVER=") || !strings.Contains(line, " HUBCTL_TOKEN=") {
		s.t.Fatalf("README export line %q does not set HUBCTL_SERVER and HUBCTL_TOKEN as the banner does", line)
	}
	m := exportLine.FindStringSubmatch(s.dev.Stderr())
	s.env["HUBCTL_SERVER"], s.env["HUBCTL_TOKEN"] = m[1], m[2]
}

// await waits for pattern on p's stderr and returns its first group.
func (s *session) await(what string, p *clitest.Process, pattern *regexp.Regexp) string {
	s.t.Helper()
	var match []string
	s.waitFor(what, func() bool {
		if code, exited := p.Exited(); exited {
			s.t.Fatalf("waiting for %s: the command exited %d:\n%s", what, code, p.Stderr())
		}
		match = pattern.FindStringSubmatch(p.Stderr())
		return match != nil
	})
	return match[1]
}

func (s *session) waitFor(what string, done func() bool) {
	s.t.Helper()
	wait.Poll{Patience: patience, Interval: 100 * time.Millisecond, Explain: func() string {
		stderr := ""
		if s.dev != nil {
			stderr = s.dev.Stderr()
		}
		return "hubctl dev said:\n" + stderr
	}}.Until(s.t, what, done)
}

// quickstartBlocks returns the lines of every ```sh block under the
// README's "## Quickstart" heading.
func quickstartBlocks(t *testing.T) [][]string {
	t.Helper()
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(readme), "\n## Quickstart\n")
	if !found {
		t.Fatal(`README.md has no "## Quickstart" section`)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var (
		blocks [][]string
		inside bool
	)
	for line := range strings.Lines(section) {
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "```sh":
			inside = true
			blocks = append(blocks, nil)
		case line == "```":
			inside = false
		case inside:
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], line)
		}
	}
	return blocks
}

// reachableTempDir is a temp dir the postgres OS user can enter: when the
// test runs as root, PostgreSQL runs as that user, and Go's temp dirs are
// private to their creator.
func reachableTempDir(t *testing.T) string {
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "dev")
}
