package dlq_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/cli"
	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/iostreams"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// seed creates tenant acme with a webhook subscription and n dead letters
// of it (reason exhausted), and returns the subscription's id.
func seed(t *testing.T, dsn string, n int) string {
	t.Helper()
	ctx := context.Background()
	st, err := storetest.Connect(ctx, dsn, pg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sub := uuid.Must(uuid.NewV7())
	_, err = st.Pool.Exec(ctx, `INSERT INTO tenants (id) VALUES ('acme') ON CONFLICT DO NOTHING`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Pool.Exec(ctx, `
		INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, signing_secret)
		VALUES ($1, 'acme', 'hook', 'webhook', 'https://hooks.test:443', '{*}', 'sealed')`, sub)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Pool.Exec(ctx, `
		WITH ev AS (
		    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
		                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
		    SELECT 'acme', gen_random_uuid(), 'transaction.posted', '1.0.0', 1, 'midaz', 'studio.lerian.transaction.posted',
		           now(), '{}', '{}', '{}', 't', 0, g FROM generate_series(1, $2::int) g
		    RETURNING seq)
		INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, attempts, dead_reason, dead_at, last_status)
		SELECT gen_random_uuid(), 'acme', $1, seq, 'dead', 8, 'exhausted', now() - seq * interval '1 second', 503 FROM ev`, sub, n)
	if err != nil {
		t.Fatal(err)
	}
	return sub.String()
}

// hubMode is one way of reaching a hub seeded by seed: its environment
// and the seeded subscription.
type hubMode struct {
	env map[string]string
	sub string
}

// modes are the two ways of reaching the hub, over one database each.
func modes(t *testing.T, n int) map[string]hubMode {
	direct, remote := pgtest.DSN(t), pgtest.DSN(t)
	scope := map[string]string{"HUBCTL_TENANT": "acme"}
	return map[string]hubMode{
		"direct": {clitest.With(clitest.Direct(direct), scope), seed(t, direct, n)},
		"remote": {clitest.With(clitest.Remote(clitest.Serve(t, remote), clitest.AdminToken), scope), seed(t, remote, n)},
	}
}

func TestDLQListAndReplayInBothModes(t *testing.T) {
	const n = 3
	for mode, m := range modes(t, n) {
		t.Run(mode, func(t *testing.T) {
			list := clitest.Run(t, m.env, "dlq", "list", "--subscription", m.sub, "--reason", "exhausted", "-o", "json")
			var page hubapi.Page[hubapi.DeadLetter]
			if list.Code != 0 || json.Unmarshal([]byte(list.Stdout), &page) != nil || len(page.Items) != n {
				t.Fatalf("list: %d %s %s", list.Code, list.Stdout, list.Stderr)
			}

			byName := clitest.Run(t, m.env, "dlq", "list", "--subscription", "hook", "-o", "json")
			if byName.Code != 0 || json.Unmarshal([]byte(byName.Stdout), &page) != nil || len(page.Items) != n {
				t.Errorf("list by subscription name: %d %s %s", byName.Code, byName.Stdout, byName.Stderr)
			}
			unknown := clitest.Run(t, m.env, "dlq", "replay", "--subscription", "nobody", "--yes")
			if unknown.Code != cmdutil.ExitNotFound || !strings.Contains(unknown.Stderr, "--subscription") || !strings.Contains(unknown.Stderr, `"nobody" not found`) {
				t.Errorf("replay of an unknown subscription name: %d %s", unknown.Code, unknown.Stderr)
			}
			for _, dryRun := range []string{"--dry-run=false", "--dry-run"} {
				none := clitest.Run(t, m.env, "dlq", "replay", "--id", "0196a1c3-0a1b-7c2d-8e3f-405162738495", dryRun)
				if none.Code != cmdutil.ExitNotFound || !strings.Contains(none.Stderr, "--id 0196a1c3-0a1b-7c2d-8e3f-405162738495") {
					t.Errorf("replay %s of an id no dead letter has: %d %s %s", dryRun, none.Code, none.Stdout, none.Stderr)
				}
			}

			dry := clitest.Run(t, m.env, "dlq", "replay", "--reason", "exhausted", "--dry-run", "-o", "json")
			if dry.Code != 0 || result(t, dry.Stdout) != (hubapi.DeadLetterReplayResult{Matched: 3, Replayed: 0, DryRun: true}) {
				t.Errorf("dry run: %d %s %s", dry.Code, dry.Stdout, dry.Stderr)
			}
			refused := clitest.Run(t, m.env, "dlq", "replay", "--reason", "exhausted")
			if refused.Code != cmdutil.ExitUsage || !strings.Contains(refused.Stderr, "--yes") || !strings.Contains(refused.Stderr, "3 dead letters") {
				t.Errorf("bulk replay without --yes off a terminal: %d %s", refused.Code, refused.Stderr)
			}

			one := clitest.Run(t, m.env, "dlq", "replay", "--id", page.Items[0].ID, "-o", "json")
			if one.Code != 0 || result(t, one.Stdout) != (hubapi.DeadLetterReplayResult{Matched: 1, Replayed: 1, DryRun: false}) {
				t.Errorf("replay by id: %d %s %s", one.Code, one.Stdout, one.Stderr)
			}
			rest := clitest.Run(t, m.env, "dlq", "replay", "--subscription", "hook", "--yes", "-o", "json")
			if rest.Code != 0 || result(t, rest.Stdout) != (hubapi.DeadLetterReplayResult{Matched: 2, Replayed: 2, DryRun: false}) {
				t.Errorf("bulk replay: %d %s %s", rest.Code, rest.Stdout, rest.Stderr)
			}
			empty := clitest.Run(t, m.env, "dlq", "list", "-o", "json")
			if empty.Code != 0 || !strings.Contains(empty.Stdout, `"items": []`) {
				t.Errorf("after replaying everything: %s %s", empty.Stdout, empty.Stderr)
			}
			bad := clitest.Run(t, m.env, "dlq", "list", "--reason", "lost")
			if bad.Code != cmdutil.ExitFailure || !strings.Contains(bad.Stderr, "reason") {
				t.Errorf("bad reason: %d %s", bad.Code, bad.Stderr)
			}
		})
	}
}

// TestLargeReplayShowsProgress replays more than one chunk and expects a
// progress line per chunk on a stderr that is not a terminal.
func TestLargeReplayShowsProgress(t *testing.T) {
	dsn := pgtest.DSN(t)
	seed(t, dsn, 1200)
	env := clitest.With(clitest.Direct(dsn), map[string]string{"HUBCTL_TENANT": "acme"})
	res := clitest.Run(t, env, "dlq", "replay", "--yes", "-o", "json")
	if res.Code != 0 || result(t, res.Stdout) != (hubapi.DeadLetterReplayResult{Matched: 1200, Replayed: 1200, DryRun: false}) {
		t.Fatalf("replay: %d %s %s", res.Code, res.Stdout, res.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.Stderr), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "Replaying  500/1200") || !strings.HasSuffix(lines[2], "100%") {
		t.Errorf("progress:\n%s", res.Stderr)
	}
}

// TestBulkReplayAsksOnATerminal answers the prompt as a person would.
func TestBulkReplayAsksOnATerminal(t *testing.T) {
	dsn := pgtest.DSN(t)
	seed(t, dsn, 2)
	env := clitest.With(clitest.Direct(dsn), map[string]string{"HUBCTL_TENANT": "acme"})
	run := func(answer string) (int, string, string) {
		ios, in, out, errOut := iostreams.Test()
		ios.SetStdinTTY(true)
		in.WriteString(answer)
		f := &cmdutil.Factory{IOStreams: ios, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
		code := cli.Run(t.Context(), f, []string{"dlq", "replay", "-o", "json"})
		return code, out.String(), errOut.String()
	}
	code, out, errOut := run("n\n")
	if code != cmdutil.ExitFailure || out != "" || !strings.Contains(errOut, "Replay 2 dead letters? [y/N]") {
		t.Errorf("declined: %d %q %q", code, out, errOut)
	}
	code, out, errOut = run("y\n")
	if code != 0 || result(t, out) != (hubapi.DeadLetterReplayResult{Matched: 2, Replayed: 2}) {
		t.Errorf("confirmed: %d %q %q", code, out, errOut)
	}
}

// result decodes a replay's JSON answer; output that is not one decodes to
// an impossible result, so the comparison fails with the output shown.
func result(t *testing.T, stdout string) hubapi.DeadLetterReplayResult {
	t.Helper()
	var r hubapi.DeadLetterReplayResult
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		return hubapi.DeadLetterReplayResult{Matched: -1}
	}
	return r
}
