package subs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/subs"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

func TestCreateSendsTheFilter(t *testing.T) {
	f, _, _, _ := cmdtest.Factory(nil)
	var got *subs.CreateOptions
	err := cmdtest.Exec(t, f, subs.NewCmdCreate(f, func(o *subs.CreateOptions) error { got = o; return nil }),
		"--name", "big", "--type", "pull", "--filter", "data.amount > 100")
	if err != nil || got == nil || got.Body.Filter == nil || *got.Body.Filter != "data.amount > 100" {
		t.Fatalf("err %v, options %+v", err, got)
	}
}

const testEvent = `{"specversion":"1.0","id":"01890a5d-ac96-774b-bcce-b302099a8057","source":"midaz","type":"studio.lerian.transaction.posted",
"time":"2026-12-01T12:00:00Z","subject":"acct-42","schemaversion":"1.0.0","resourcetype":"transaction","eventtype":"posted",
"tenantid":"acme","datacontenttype":"application/json","data":{"amount":150}}`

// storedEvent is an event as hubctl events get -o json prints it.
const storedEvent = `{"id": "0190b6a2-7c1e-7d3a-9f00-00000000002a", "seq": 42, "type": "transaction.posted",
"ce_type": "studio.lerian.midaz.transaction.posted", "source": "midaz", "tenant_id": "acme", "schema_version": "1.0.0",
"datacontenttype": "application/json", "time": "2026-12-01T08:00:00Z", "received_at": "2026-12-01T08:00:00.104211Z",
"topic": "lerian.events", "partition": 3, "offset": 1187, "size_bytes": 13,
"headers": [{"key": "ce_id", "value": "0190b6a2-7c1e-7d3a-9f00-00000000002a"}], "payload": {"amount": 150},
"deliveries": [{"subscription_id": "01a22ef0-1b2c-7d3e-8f40-5a6b7c8d9e0f", "subscription_name": "ledger-pull", "sink_type": "pull", "pulled": true}]}`

func TestTestFilter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(path, []byte(testEvent), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		stdin    string
		code     int
		out      string
		errorHas string
	}{
		{"match from a file", []string{"--filter", `type == "transaction.posted" && data.amount > 100 && tenant_id == "acme"`, "--event", "@" + path}, "", 0, "match\n", ""},
		{"match from stdin", []string{"--filter", `subject.startsWith("acct-") && time > timestamp("2026-01-01T00:00:00Z")`, "--event", "-"}, testEvent, 0, "match\n", ""},
		{"no match", []string{"--filter", `data.amount < 100`, "--event", "@" + path}, "", 1, "no match\n", ""},
		{"evaluation error", []string{"--filter", `data.missing == 1`, "--event", "@" + path}, "", 1, "no match: no such key: missing\n", ""},
		{"refused filter", []string{"--filter", `data.amount >`, "--event", "@" + path}, "", 2, "", "line 1, column 14"},
		{"filter missing", []string{"--event", "@" + path}, "", 2, "", "required"},
		{"misspelt attribute", []string{"--filter", "true", "--event", "-"}, `{"subjekt":"x"}`, 2, "", "subjekt"},
		{"an event cut short", []string{"--filter", "true", "--event", "-"}, "{\"type\": \"x\",\n\"data\": {", 2, "", "invalid --event: the JSON text ends in the middle of a value at line 2, column 10"},
		{"a stored event cut short", []string{"--filter", "true", "--event", "-"}, storedEvent[:len(storedEvent)/2], 2, "", "invalid --event: the JSON text ends in the middle of a value at line "},
		{"not a file argument", []string{"--filter", "true", "--event", "event.json"}, "", 2, "", "@FILE"},
		{"a stored event as events get prints it", []string{"--filter", `type == "transaction.posted" && ce_type == "studio.lerian.midaz.transaction.posted" && data.amount > 100`, "--event", "-"}, storedEvent, 0, "match\n", ""},
		{"a stored event with a base64 payload", []string{"--filter", `has(data.amount)`, "--event", "-"},
			strings.Replace(storedEvent, `"payload": {"amount": 150}`, `"payload": "/wA=", "payload_encoding": "base64"`, 1), 1, "no match: no such attribute(s): data\n", ""},
		{"a stored event, misspelt", []string{"--filter", "true", "--event", "-"}, strings.Replace(storedEvent, `"topic"`, `"topik"`, 1), 2, "", "topik"},
		{"both event flags", []string{"--filter", "true", "--event", "-", "--event-id", "x"}, "", 2, "", "one of --event or --event-id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, stdin, stdout, _ := cmdtest.Factory(nil)
			stdin.WriteString(tc.stdin)
			err := cmdtest.Exec(t, f, subs.NewCmdTestFilter(f, nil), tc.args...)
			if code := cmdutil.ExitCode(err); code != tc.code {
				t.Fatalf("exit code %d (%v), want %d", code, err, tc.code)
			}
			if stdout.String() != tc.out {
				t.Errorf("stdout %q, want %q", stdout.String(), tc.out)
			}
			if tc.errorHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errorHas)) {
				t.Errorf("error %v does not mention %q", err, tc.errorHas)
			}
			var exit *cmdutil.ExitError
			if tc.code == 1 && (!errors.As(err, &exit) || !exit.Silent) {
				t.Errorf("a non-match should exit quietly after its own output, got %v", err)
			}
		})
	}
}

// TestTestFilterOnAStoredEvent tests a filter against an event the hub
// stored, named by --event-id and as events get -o json printed it.
func TestTestFilterOnAStoredEvent(t *testing.T) {
	dsn := pgtest.DSN(t)
	if r := clitest.Run(t, clitest.Direct(dsn), "tenants", "create", "acme"); r.Code != 0 {
		t.Fatalf("create tenant: exit %d: %s", r.Code, r.Stderr)
	}
	seedMissed(t, dsn, 1)
	env := clitest.With(clitest.Direct(dsn), map[string]string{"HUBCTL_TENANT": "acme"})
	list := clitest.Run(t, env, "events", "list", "--jq", ".items[0].id")
	id := strings.TrimSpace(list.Stdout)
	if list.Code != 0 || id == "" {
		t.Fatalf("events list: exit %d, %q: %s", list.Code, list.Stdout, list.Stderr)
	}
	const matching, other = `type == "transaction.posted" && source == "midaz" && tenant_id == "acme"`, `type == "account.created"`
	for _, tc := range []struct {
		filter string
		code   int
	}{{matching, 0}, {other, cmdutil.ExitFailure}} {
		if r := clitest.Run(t, env, "subs", "test-filter", "--filter", tc.filter, "--event-id", id); r.Code != tc.code {
			t.Errorf("--event-id, %s: exit %d (%s%s), want %d", tc.filter, r.Code, r.Stdout, r.Stderr, tc.code)
		}
	}
	printed := clitest.Run(t, env, "events", "get", id, "-o", "json")
	if printed.Code != 0 {
		t.Fatalf("events get: exit %d: %s", printed.Code, printed.Stderr)
	}
	if r := clitest.RunWithStdin(t, env, printed.Stdout, "subs", "test-filter", "--filter", matching, "--event", "-"); r.Code != 0 {
		t.Errorf("--event with events get's output: exit %d (%s%s)", r.Code, r.Stdout, r.Stderr)
	}
	if r := clitest.Run(t, env, "subs", "test-filter", "--filter", "true", "--event-id", "0190b6a2-7c1e-7d3a-9f00-0000000000ff"); r.Code != cmdutil.ExitNotFound {
		t.Errorf("--event-id of no event: exit %d, want %d (%s)", r.Code, cmdutil.ExitNotFound, r.Stderr)
	}
}
