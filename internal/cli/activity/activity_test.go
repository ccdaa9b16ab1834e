package activity_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/activity"
	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestActivityParsesItsFlagsWithoutAHub(t *testing.T) {
	for _, tc := range []struct {
		args         []string
		format       output.Format
		subscription string
		since        time.Duration // back from now, roughly
		follow       bool
		wantErr      string
	}{
		// Not a terminal: the default is one JSON object per line.
		{args: nil, format: output.JSONL, since: 24 * time.Hour},
		{args: []string{"--subscription", "orders", "--since", "2h", "-f", "-o", "table"}, format: output.Table, subscription: "orders", since: 2 * time.Hour, follow: true},
		{args: []string{"--since", "yesterday"}, wantErr: "--since"},
		{args: []string{"--since", "-2h"}, wantErr: "--since"},
		{args: []string{"-o", "yaml"}, wantErr: "yaml"},
	} {
		f, _, _, _ := cmdtest.Factory(nil)
		var got *activity.Options
		err := cmdtest.Exec(t, f, activity.NewCmd(f, func(o *activity.Options) error { got = o; return nil }), tc.args...)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || got != nil || cmdutil.ExitCode(err) != cmdutil.ExitUsage {
				t.Errorf("%q: err %v (exit %d), ran %v; want a usage error with %q", tc.args, err, cmdutil.ExitCode(err), got != nil, tc.wantErr)
			}
			continue
		}
		if err != nil || got == nil {
			t.Fatalf("%q: err %v, ran %v", tc.args, err, got != nil)
		}
		if back := time.Since(got.Since); got.Format != tc.format || got.Subscription != tc.subscription || got.Follow != tc.follow ||
			back < tc.since || back > tc.since+time.Minute {
			t.Errorf("%q: options %+v", tc.args, got)
		}
	}
}

// TestActivityShowsTheTenantsOperationalEventsOldestFirst runs the verb
// on the database, as the admin: what it did to two subscriptions, and
// only one's with --subscription.
func TestActivityShowsTheTenantsOperationalEventsOldestFirst(t *testing.T) {
	dsn := pgtest.DSN(t)
	env := clitest.With(clitest.Direct(dsn), map[string]string{"HUBCTL_TENANT": "acme"})
	run := func(args ...string) string {
		t.Helper()
		r := clitest.Run(t, env, args...)
		if r.Code != 0 {
			t.Fatalf("hubctl %s: exit %d: %s", strings.Join(args, " "), r.Code, r.Stderr)
		}
		return r.Stdout
	}
	run("tenants", "create", "acme")
	var orders, audit struct{ ID string }
	if err := json.Unmarshal([]byte(run("subs", "create", "--name", "orders", "--type", "pull", "-o", "json")), &orders); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(run("subs", "create", "--name", "audit", "--type", "pull", "-o", "json")), &audit); err != nil {
		t.Fatal(err)
	}
	run("subs", "disable", "orders")

	read := func(args ...string) []activity.Item {
		t.Helper()
		var items []activity.Item
		for line := range strings.Lines(run(append([]string{"activity", "-o", "jsonl"}, args...)...)) {
			var it activity.Item
			if err := json.Unmarshal([]byte(line), &it); err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			items = append(items, it)
		}
		return items
	}
	var got []string
	for _, it := range read() {
		got = append(got, it.Type+" "+it.SubscriptionID)
	}
	want := []string{"hub.subscription_created " + orders.ID, "hub.subscription_created " + audit.ID, "hub.subscription_disabled " + orders.ID}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("activity:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	items := read("--subscription", "orders")
	if len(items) != 2 || items[1].Type != "hub.subscription_disabled" {
		t.Fatalf("activity of orders: %+v", items)
	}
	var data map[string]any
	if err := json.Unmarshal(items[1].Data, &data); err != nil {
		t.Fatal(err)
	}
	if data["trigger"] != "manual" || data["subscription_name"] != "orders" || data["actor"].(map[string]any)["kind"] != "admin" {
		t.Errorf("disabled data %v", data)
	}
	if len(read("--since", time.Now().Add(time.Hour).UTC().Format(time.RFC3339))) != 0 {
		t.Error("activity since an hour from now is not empty")
	}
	if table := run("activity", "-o", "table"); !strings.Contains(table, "subscription_disabled") || !strings.Contains(table, "manual") {
		t.Errorf("table:\n%s", table)
	}
}
