package clitest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/testutil/wait"
)

func TestRunGoesThroughTheRealEntryPoint(t *testing.T) {
	r := clitest.Run(t, nil, "no-such-command")
	want := "Error: unknown command \"no-such-command\" for \"hubctl\"\nRun 'hubctl --help' for usage.\n"
	if r.Code != cmdutil.ExitUsage || r.Stdout != "" || r.Stderr != want {
		t.Errorf("got %+v; want exit 2, nothing on stdout and stderr %q", r, want)
	}
}

func TestRunSeesOnlyTheGivenEnvironment(t *testing.T) {
	t.Setenv("STREAMING_HUB_ENV", "staging")
	r := clitest.Run(t, map[string]string{"STREAMING_HUB_LOG_LEVEL": "debug"}, "config", "show", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	for _, want := range []string{
		`"setting": "STREAMING_HUB_LOG_LEVEL",
    "value": "debug",
    "source": "env"`,
		`"setting": "STREAMING_HUB_ENV",
    "value": "production",
    "source": "default"`,
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.Stdout)
		}
	}
}

func TestRunWithStdinFeedsTheCommand(t *testing.T) {
	// Invalid JSON on stdin stops produce before it dials Kafka, so the
	// unreachable broker is never contacted: exit 2 proves stdin was read.
	env := map[string]string{"STREAMING_HUB_KAFKA_BROKERS": "127.0.0.1:1"}
	r := clitest.RunWithStdin(t, env, "{nope", "events", "produce", "--tenant", "acme", "--type", "transaction.posted", "--data", "-")
	if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, "not valid JSON") {
		t.Errorf("got %+v; want exit 2 saying the data is not valid JSON", r)
	}
}

func TestStartReportsACommandThatEndsOnItsOwn(t *testing.T) {
	p := clitest.Start(t, nil, "version")
	wait.Poll{Patience: 10 * time.Second}.Until(t, "version to end", func() bool {
		_, exited := p.Exited()
		return exited
	})
	if code, _ := p.Exited(); code != 0 || !strings.HasPrefix(p.Stdout(), "hubctl ") {
		t.Errorf("exit %d, stdout %q", code, p.Stdout())
	}
	if code := p.Stop(time.Second); code != 0 {
		t.Errorf("Stop after the end returned %d, want the exit code 0", code)
	}
}

func TestDatabaseNamesOnlyTheDSN(t *testing.T) {
	if env := clitest.Database(""); env != nil {
		t.Errorf(`Database("") = %v, want no environment at all`, env)
	}
	env := clitest.Database("postgres://db/hub")
	if len(env) != 1 || env["STREAMING_HUB_POSTGRES_DSN"] != "postgres://db/hub" {
		t.Errorf("Database(dsn) = %v", env)
	}
}
