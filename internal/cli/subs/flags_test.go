package subs_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/cli/subs"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestCreateBuildsTheBodyWithoutAHub(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		stdin   string
		check   func(t *testing.T, o *subs.CreateOptions)
		wantErr string
	}{
		{
			name: "field flags",
			args: []string{"--name", "orders", "--type", "webhook", "--url", "https://acme.example/h", "--event-types", "a.*,b.c", "-o", "yaml"},
			check: func(t *testing.T, o *subs.CreateOptions) {
				if o.Format != output.YAML || o.Body.Name != "orders" || !strings.Contains(string(o.Body.Sink), `"url":"https://acme.example/h"`) ||
					!reflect.DeepEqual(o.Body.EventTypes, []string{"a.*", "b.c"}) {
					t.Errorf("options %+v", o)
				}
			},
		},
		{
			name:  "from stdin",
			args:  []string{"--from-file", "-"},
			stdin: `{"name": "feed", "sink": {"type": "pull"}}`,
			check: func(t *testing.T, o *subs.CreateOptions) {
				if o.Body.Name != "feed" || !strings.Contains(string(o.Body.Sink), `"pull"`) {
					t.Errorf("options %+v", o)
				}
			},
		},
		{name: "cut short", args: []string{"--from-file", "-"}, stdin: "{\"name\": \"feed\",\n \"sink\": {\"type\": \"pull\"}\n",
			wantErr: "invalid standard input: the JSON text ends in the middle of a value at line 2, column 26"},
		{name: "malformed", args: []string{"--from-file", "-"}, stdin: "{\"name\": \"feed\",\n \"sink\": {\"type\": pull}}",
			wantErr: "invalid standard input: invalid character 'p' looking for beginning of value at line 2, column 19"},
		{name: "file and flags", args: []string{"--from-file", "-", "--name", "x"}, wantErr: "--from-file"},
		{name: "bad format", args: []string{"--name", "x", "-o", "xml"}, wantErr: "xml"},
		{name: "an argument", args: []string{"orders"}, wantErr: "unknown command"},
		{name: "an empty name", args: []string{"--name", "", "--type", "pull"}, wantErr: "--name must not be empty"},
		{name: "a blank name", args: []string{"--name", "  ", "--type", "pull"}, wantErr: "--name must not be empty"},
		// Sinks whose settings no flag gives point to --from-file, with a start.
		{name: "sqs by flags", args: []string{"--name", "q", "--type", "sqs"}, wantErr: `--from-file - <<'EOF'`},
		{name: "sqs by flags, its example", args: []string{"--name", "q", "--type", "sqs"}, wantErr: `"queue_url"`},
		{name: "rabbitmq by flags", args: []string{"--name", "q", "--type", "rabbitmq", "--url", "amqp://x"}, wantErr: `"exchange"`},
		{name: "eventbridge by flags", args: []string{"--name", "q", "--type", "eventbridge"}, wantErr: `"event_bus"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, stdin, _, _ := cmdtest.Factory(nil)
			stdin.WriteString(tc.stdin)
			var got *subs.CreateOptions
			err := cmdtest.Exec(t, f, subs.NewCmdCreate(f, func(o *subs.CreateOptions) error { got = o; return nil }), tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || got != nil {
					t.Fatalf("err %v, ran %v; want an error with %q and no run", err, got != nil, tc.wantErr)
				}
				return
			}
			if err != nil || got == nil {
				t.Fatalf("err %v, ran %v", err, got != nil)
			}
			tc.check(t, got)
		})
	}
}

func TestUpdateRefusesAnotherSubscriptionsFileBeforeReachingTheHub(t *testing.T) {
	const id = "0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b"
	dir := t.TempDir()
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"id": "0196a1c2-7d3e-7f00-8a4b-000000000000", "name": "x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _, _, _ := cmdtest.Factory(nil)
	ran := false
	err := cmdtest.Exec(t, f, subs.NewCmdUpdate(f, func(*subs.UpdateOptions) error { ran = true; return nil }), id, "--from-file", other)
	if err == nil || ran || cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Fatalf("err %v (exit %d), ran %v; want exit 2 and no run", err, cmdutil.ExitCode(err), ran)
	}

	var got *subs.UpdateOptions
	err = cmdtest.Exec(t, f, subs.NewCmdUpdate(f, func(o *subs.UpdateOptions) error { got = o; return nil }), id, "--url", "https://acme.example/v2")
	if err != nil || got == nil {
		t.Fatalf("err %v, ran %v", err, got != nil)
	}
	if got.ID != id || got.FromFile != nil || !got.Changed("url") || got.Changed("name") {
		t.Errorf("options %+v: want the id, no file, and only --url changed", got)
	}
}

func TestListingsParseTheirPageFlags(t *testing.T) {
	const id = "0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b"
	f, _, _, _ := cmdtest.Factory(nil)
	var list *subs.ListOptions
	if err := cmdtest.Exec(t, f, subs.NewCmdList(f, func(o *subs.ListOptions) error { list = o; return nil }), "--limit", "7", "--cursor", "c"); err != nil {
		t.Fatal(err)
	}
	if want := (hubapi.ListParams{Limit: 7, Cursor: "c"}); list.Page != want || list.Next != "hubctl subs list --limit 7" {
		t.Errorf("list options %+v", list)
	}
	if err := cmdtest.Exec(t, f, subs.NewCmdList(f, func(o *subs.ListOptions) error { list = o; return nil }), "--counts", "--limit", "7"); err != nil {
		t.Fatal(err)
	}
	if !list.Counts || list.Next != "hubctl subs list --counts --limit 7" {
		t.Errorf("list --counts options %+v", list)
	}
	if err := cmdtest.Exec(t, f, subs.NewCmdList(f, func(*subs.ListOptions) error { t.Error("ran"); return nil }), "--limit", "0"); err == nil {
		t.Error("--limit 0 accepted")
	}

	var dl *subs.DeliveriesOptions
	if err := cmdtest.Exec(t, f, subs.NewCmdDeliveries(f, func(o *subs.DeliveriesOptions) error { dl = o; return nil }), id, "--state", "dead"); err != nil {
		t.Fatal(err)
	}
	if dl.ID != id || dl.Params.State != "dead" || dl.Params.Limit != hubapi.DefaultPageLimit || dl.Next != "hubctl subs deliveries "+id+" --state dead" {
		t.Errorf("deliveries options %+v", dl)
	}
	err := cmdtest.Exec(t, f, subs.NewCmdDeliveries(f, func(*subs.DeliveriesOptions) error { t.Error("ran"); return nil }), id, "--state", "lost")
	if err == nil || !strings.Contains(err.Error(), "invalid --state") || cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Errorf("--state lost: err %v", err)
	}
}

func TestDeliveriesWindowFlags(t *testing.T) {
	const id = "0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b"
	f, _, _, _ := cmdtest.Factory(nil)
	var dl *subs.DeliveriesOptions
	run := func(o *subs.DeliveriesOptions) error { dl = o; return nil }
	// A time passes through as the hub's UTC RFC 3339, and the next page's
	// command repeats it.
	if err := cmdtest.Exec(t, f, subs.NewCmdDeliveries(f, run), id, "--since", "2026-12-01T01:00:00+01:00", "--until", "2026-12-02T00:00:00Z"); err != nil {
		t.Fatal(err)
	}
	if dl.Params.Since != "2026-12-01T00:00:00Z" || dl.Params.Until != "2026-12-02T00:00:00Z" ||
		dl.Next != "hubctl subs deliveries "+id+" --since 2026-12-01T00:00:00Z --until 2026-12-02T00:00:00Z" {
		t.Errorf("window options %+v", dl)
	}
	// A duration counts back from now, and is repeated as the time it meant.
	before := time.Now()
	if err := cmdtest.Exec(t, f, subs.NewCmdDeliveries(f, run), id, "--since", "1h"); err != nil {
		t.Fatal(err)
	}
	since, err := time.Parse(time.RFC3339Nano, dl.Params.Since)
	if err != nil || since.Before(before.Add(-time.Hour-time.Second)) || since.After(time.Now().Add(-time.Hour)) || dl.Params.Until != "" ||
		dl.Next != "hubctl subs deliveries "+id+" --since "+dl.Params.Since {
		t.Errorf("--since 1h: options %+v, %v", dl, err)
	}
	for _, bad := range [][]string{
		{"--since", "yesterday"},
		{"--until", "-1h"},
		{"--since", "2026-12-02T00:00:00Z", "--until", "2026-12-01T00:00:00Z"},
		{"--since", "1h", "--until", "2h"},
	} {
		err := cmdtest.Exec(t, f, subs.NewCmdDeliveries(f, func(*subs.DeliveriesOptions) error { t.Error("ran"); return nil }), append([]string{id}, bad...)...)
		if cmdutil.ExitCode(err) != cmdutil.ExitUsage {
			t.Errorf("%v: err %v, want a usage error", bad, err)
		}
	}
}

func TestOneSubscriptionVerbsTakeOneID(t *testing.T) {
	f, _, _, _ := cmdtest.Factory(nil)
	for name, newCmd := range map[string]func(*cmdutil.Factory, func(*subs.OneOptions) error) *cobra.Command{
		"get": subs.NewCmdGet, "enable": subs.NewCmdEnable, "disable": subs.NewCmdDisable, "verify": subs.NewCmdVerify,
	} {
		var got *subs.OneOptions
		if err := cmdtest.Exec(t, f, newCmd(f, func(o *subs.OneOptions) error { got = o; return nil }), "s1", "-o", "json"); err != nil || got == nil || got.ID != "s1" || got.Format != output.JSON {
			t.Errorf("%s s1: err %v, options %+v", name, err, got)
		}
		if err := cmdtest.Exec(t, f, newCmd(f, func(*subs.OneOptions) error { t.Errorf("%s ran without an id", name); return nil })); err == nil {
			t.Errorf("%s without an id: no error", name)
		}
	}
}
