package subs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/subs"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
)

// seedMissed stores n events of acme received in the last minutes, none
// delivered.
func seedMissed(t *testing.T, dsn string, n int) {
	t.Helper()
	ctx := context.Background()
	st, err := storetest.Connect(ctx, dsn, pg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = st.Pool.Exec(ctx, `
		INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
		                    header_keys, header_values, payload, topic, kafka_partition, kafka_offset, received_at)
		SELECT 'acme', gen_random_uuid(), 'transaction.posted', '1.0.0', 1, 'midaz', 'studio.lerian.transaction.posted',
		       now(), '{}', '{}', '{}', 't', 0, g, now() - g * interval '1 minute'
		FROM generate_series(1, $1) g`, n)
	if err != nil {
		t.Fatalf("seed events: %v", err)
	}
}

func TestRecoverBehavesTheSameInEveryMode(t *testing.T) {
	rcv := newReceiver(t)
	steps := []struct {
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{[]string{"subs", "recover", "orders", "--since", "1h", "--dry-run", "-o", "json"}, 0, `"matched": 3,`, ""},
		{[]string{"subs", "recover", "orders", "--since", "2m30s", "--dry-run", "-o", "json"}, 0, `"matched": 2,`, ""},
		{[]string{"subs", "recover", "orders", "--since", "1h", "-o", "json"}, 0, `"queued": 3,`, ""},
		{[]string{"subs", "recover", "orders", "--since", "1h", "-o", "table"}, 0, "3        0       false", ""},
		{[]string{"subs", "disable", "orders"}, 0, "", ""},
		// The way out is named as a flag, not as the API's field.
		{[]string{"subs", "recover", "orders", "--since", "1h"}, cmdutil.ExitFailure, "", "pass --dry-run"},
		{[]string{"subs", "recover", "orders", "--since", "1h", "--dry-run", "-o", "json"}, 0, `"matched": 3,`, ""},
		{[]string{"subs", "enable", "orders"}, 0, "", ""},
		{[]string{"subs", "recover", "feed", "--since", "1h"}, cmdutil.ExitFailure, "", ""},
		{[]string{"subs", "recover", "nobody", "--since", "1h"}, cmdutil.ExitNotFound, "", ""},
		{[]string{"subs", "recover", "orders"}, cmdutil.ExitUsage, "", ""},
		{[]string{"subs", "recover", "orders", "--since", "yesterday"}, cmdutil.ExitUsage, "", ""},
		{[]string{"subs", "recover", "orders", "--since", "1h", "--until", "2h"}, cmdutil.ExitUsage, "", ""},
	}
	for _, m := range modes(t) {
		for _, create := range [][]string{
			// Only the seeded events: not the operational events of
			// feed's creation and of orders' own changes.
			{"subs", "create", "--name", "orders", "--type", "webhook", "--url", rcv.url, "--event-types", "transaction.*", "-o", "json"},
			{"subs", "create", "--name", "feed", "--type", "pull", "-o", "json"},
		} {
			if r := clitest.Run(t, m.env, create...); r.Code != 0 {
				t.Fatalf("%s: create: exit %d: %s", m.name, r.Code, r.Stderr)
			}
		}
		seedMissed(t, m.dsn, 3)
		for _, s := range steps {
			r := clitest.Run(t, m.env, s.args...)
			if r.Code != s.wantCode || !strings.Contains(r.Stdout, s.wantStdout) || !strings.Contains(r.Stderr, s.wantStderr) || strings.Contains(r.Stderr, "dry_run") {
				t.Errorf("%s: %v: exit %d, stdout %q, want exit %d with %q (stderr %q)", m.name, s.args, r.Code, r.Stdout, s.wantCode, s.wantStdout, r.Stderr)
			}
		}
	}
}

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"6h", now.Add(-6 * time.Hour), true},
		{"90m", now.Add(-90 * time.Minute), true},
		{"2026-12-01T00:00:00Z", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), true},
		{"2026-12-01T01:00:00.5+01:00", time.Date(2026, 12, 1, 0, 0, 0, 500_000_000, time.UTC), true},
		{"-6h", time.Time{}, false},
		{"0s", time.Time{}, false},
		{"yesterday", time.Time{}, false},
		{"2026-12-01", time.Time{}, false},
	}
	for _, c := range cases {
		got, err := subs.ParseWhen("since", c.in, now)
		if (err == nil) != c.ok || !got.Equal(c.want) {
			t.Errorf("ParseWhen(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
}
