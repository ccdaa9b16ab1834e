package subs_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
)

// The seeded deliveries have fixed ids, so that every mode's database holds
// the same ones and outputs compare byte for byte.
const (
	succeededDelivery = "0196b000-0000-7000-8000-000000000001"
	deadDelivery      = "0196b000-0000-7000-8000-000000000002"
	pendingDelivery   = "0196b000-0000-7000-8000-000000000003"
)

// seedDeliveries stores three events of acme and a delivery of each to
// sub: one that succeeded at its second attempt, one dead after a failure
// whose error text would break a table, one pending. Times are fixed.
func seedDeliveries(t *testing.T, dsn, sub string) {
	t.Helper()
	ctx := context.Background()
	st, err := storetest.Connect(ctx, dsn, pg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = st.Pool.Exec(ctx, `
WITH ev AS (
    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset, received_at)
    SELECT 'acme', ('0190b6a2-7c1e-7d3a-9f00-00000000000' || g)::uuid, 'transaction.posted', '1.0.0', 1, 'midaz',
           'studio.lerian.transaction.posted', '2026-01-02T03:04:05Z', '{}', '{}', '{}', 't', 0, g, '2026-01-02T03:04:05Z'
    FROM generate_series(1, 3) g
    RETURNING seq, kafka_offset::int AS n)
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, attempts, next_attempt_at,
                           dead_reason, dead_at, succeeded_at, last_error, last_status, created_at, updated_at)
SELECT ('0196b000-0000-7000-8000-00000000000' || n)::uuid, 'acme', $1, seq,
       (ARRAY['succeeded', 'dead', 'pending'])[n], (ARRAY[2, 1, 0])[n], '2026-01-02T04:00:00Z',
       CASE n WHEN 2 THEN 'exhausted' END, CASE n WHEN 2 THEN '2026-01-02T03:10:00Z'::timestamptz END,
       CASE n WHEN 1 THEN '2026-01-02T03:05:00Z'::timestamptz END,
       CASE n WHEN 2 THEN E'HTTP 500\n\x1b[31mred' END, CASE n WHEN 1 THEN 200 WHEN 2 THEN 500 END,
       '2026-01-02T03:04:06Z', ('2026-01-02T03:0' || (4 + n) || ':00Z')::timestamptz
FROM ev`, sub)
	if err != nil {
		t.Fatalf("seed deliveries: %v", err)
	}
	_, err = st.Pool.Exec(ctx, `
INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome, status_code, error, response_snippet)
VALUES ('0196b001-0000-7000-8000-000000000001', '`+succeededDelivery+`', 1, '2026-01-02T03:04:06Z', 1500, 'failed', NULL, 'context deadline exceeded', NULL),
       ('0196b001-0000-7000-8000-000000000002', '`+succeededDelivery+`', 2, '2026-01-02T03:04:59Z', 35, 'succeeded', 200, NULL, 'ok'),
       ('0196b001-0000-7000-8000-000000000003', '`+deadDelivery+`', 1, '2026-01-02T03:09:59Z', 80, 'failed', 500, E'HTTP 500\n\x1b[31mred', '\xff'::bytea)`)
	if err != nil {
		t.Fatalf("seed attempts: %v", err)
	}
}

func TestDeliveriesBehaveTheSameInEveryMode(t *testing.T) {
	steps := []struct {
		args       []string
		wantCode   int
		wantStdout []string
	}{
		{args: []string{"subs", "deliveries", "{hook}", "-o", "json"},
			wantStdout: []string{`"id": "` + pendingDelivery + `"`, `"next_cursor": null`, `"next_attempt_at": "2026-01-02T04:00:00Z"`}},
		{args: []string{"subs", "deliveries", "{hook}", "--limit", "2", "-o", "json"},
			wantStdout: []string{`"id": "` + deadDelivery + `"`, `"next_cursor": "`}},
		{args: []string{"subs", "deliveries", "{hook}", "--state", "dead", "-o", "yaml"},
			wantStdout: []string{"id: " + deadDelivery, "dead_reason: exhausted", "next_cursor: null"}},
		{args: []string{"subs", "deliveries", "{hook}", "-o", "table"},
			wantStdout: []string{"DELIVERY", "LAST STATUS", pendingDelivery + "  0190b6a2-7c1e-7d3a-9f00-000000000003  transaction.posted  pending"}},
		{args: []string{"subs", "deliveries", "{hook}", "--since", "2026-01-02T03:00:00Z", "--until", "2026-01-02T04:00:00Z", "-o", "json"},
			wantStdout: []string{`"id": "` + pendingDelivery + `"`, `"id": "` + deadDelivery + `"`}},
		{args: []string{"subs", "deliveries", "{hook}", "--until", "2026-01-02T03:00:00Z", "-o", "table"}, wantStdout: []string{"No deliveries."}},
		{args: []string{"subs", "deliveries", "{hook}", "--since", "tomorrow"}, wantCode: cmdutil.ExitUsage},
		// The seeded deliveries are older than a day.
		{args: []string{"subs", "list", "--counts", "-o", "json", "--jq", ".items[].last_24h | [.delivered, .failed, .dead, .sampled]"},
			wantStdout: []string{`[0,0,0,false]`}},
		{args: []string{"subs", "list", "--counts", "-o", "table"}, wantStdout: []string{"24H OK/FAILED/DEAD", "0/0/0"}},
		{args: []string{"subs", "deliveries", "{hook}", "--state", "lost"}, wantCode: cmdutil.ExitUsage},
		{args: []string{"subs", "deliveries", "{hook}", "--limit", "0"}, wantCode: cmdutil.ExitUsage},
		{args: []string{"subs", "deliveries", "{hook}", "--cursor", "forged"}, wantCode: cmdutil.ExitFailure},
		{args: []string{"subs", "deliveries", unknownID}, wantCode: cmdutil.ExitNotFound},
		{args: []string{"subs", "deliveries", "not-a-uuid"}, wantCode: cmdutil.ExitNotFound},
		{args: []string{"deliveries", "get", succeededDelivery, "-o", "json"},
			wantStdout: []string{`"attempt_history": [`, `"id": "0196b001-0000-7000-8000-000000000002"`, `"response": "ok"`, `"succeeded_at": "2026-01-02T03:05:00Z"`}},
		{args: []string{"deliveries", "get", deadDelivery, "-o", "yaml"},
			wantStdout: []string{"response: /w==", "response_encoding: base64", "dead_reason: exhausted"}},
		{args: []string{"deliveries", "get", deadDelivery, "-o", "table"},
			wantStdout: []string{"State:", "dead (exhausted)", `HTTP 500\x0a\x1b[31mred`, "#  DELIVERY ID", "1  0196b001-0000-7000-8000-000000000003  2026-01-02T03:09:59Z  80ms"}},
		{args: []string{"deliveries", "get", pendingDelivery, "-o", "table"}, wantStdout: []string{"No attempts yet."}},
		{args: []string{"deliveries", "get", unknownID}, wantCode: cmdutil.ExitNotFound},
		{args: []string{"deliveries", "get", "42"}, wantCode: cmdutil.ExitNotFound},
		// What a receiver saw (X-Lerian-Delivery-Id) leads to the delivery.
		{args: []string{"deliveries", "get", "0196b001-0000-7000-8000-000000000001", "-o", "json"},
			wantStdout: []string{`"id": "` + succeededDelivery + `"`, `"attempt_history": [`}},
		{args: []string{"events", "get", "0190b6a2-7c1e-7d3a-9f00-000000000001", "-o", "json"},
			wantStdout: []string{`"id": "0190b6a2-7c1e-7d3a-9f00-000000000001"`, `"subscription_name": "orders"`,
				`"id": "` + succeededDelivery + `"`, `"id": "0196b001-0000-7000-8000-000000000002"`, `"payload": {}`}},
		{args: []string{"events", "get", "0190b6a2-7c1e-7d3a-9f00-000000000002", "-o", "table"},
			wantStdout: []string{"Event:", "transaction.posted", "orders (webhook, ", "): delivery " + deadDelivery, "#  DELIVERY ID"}},
		{args: []string{"events", "get", unknownID}, wantCode: cmdutil.ExitNotFound},
		{args: []string{"events", "list", "--type", "transaction.posted", "--limit", "2", "-o", "json"},
			wantStdout: []string{`"id": "0190b6a2-7c1e-7d3a-9f00-000000000003"`, `"id": "0190b6a2-7c1e-7d3a-9f00-000000000002"`, `"next_cursor": "`}},
		{args: []string{"events", "list", "--source", "nobody", "-o", "table"}, wantStdout: []string{"No events."}},
		{args: []string{"events", "list", "--since", "yesterday"}, wantCode: cmdutil.ExitUsage},
	}

	rcv := newReceiver(t)
	var first []outcome
	var firstMode string
	for _, m := range modes(t) {
		created := clitest.Run(t, m.env, "subs", "create", "--name", "orders", "--type", "webhook", "--url", rcv.url, "-o", "json")
		var sub struct{ ID string }
		if err := json.Unmarshal([]byte(created.Stdout), &sub); created.Code != 0 || err != nil {
			t.Fatalf("%s: create: exit %d: %s", m.name, created.Code, created.Stderr)
		}
		seedDeliveries(t, m.dsn, sub.ID)
		outcomes := make([]outcome, len(steps))
		for i, s := range steps {
			args := make([]string, len(s.args))
			for j, a := range s.args {
				args[j] = strings.ReplaceAll(a, "{hook}", sub.ID)
			}
			r := clitest.Run(t, m.env, args...)
			// Everything but the subscription's id is the same in every
			// mode, tables included.
			outcomes[i] = outcome{code: r.Code, stdout: strings.ReplaceAll(r.Stdout, sub.ID, "{hook}"), stderr: r.Stderr}
			if r.Code != s.wantCode {
				t.Errorf("%s: %v: exit %d, want %d (stderr %q)", m.name, s.args, r.Code, s.wantCode, r.Stderr)
			}
			for _, fragment := range s.wantStdout {
				if !strings.Contains(r.Stdout, fragment) {
					t.Errorf("%s: %v: output lacks %q:\n%s", m.name, s.args, fragment, r.Stdout)
				}
			}
			if strings.Contains(r.Stdout, "\x1b") {
				t.Errorf("%s: %v: an escape sequence reached the output:\n%q", m.name, s.args, r.Stdout)
			}
			if first != nil && (r.Code != first[i].code || outcomes[i].stdout != first[i].stdout) {
				t.Errorf("%v: %s and %s differ:\n %s: exit %d %s\n %s: exit %d %s", s.args, firstMode, m.name,
					firstMode, first[i].code, first[i].stdout, m.name, r.Code, outcomes[i].stdout)
			}
		}
		if first == nil {
			first, firstMode = outcomes, m.name
		}
	}
}

func TestDeliveriesTablePointsToTheNextPage(t *testing.T) {
	m := modes(t)[0]
	created := clitest.Run(t, m.env, "subs", "create", "--name", "feed", "--type", "pull", "-o", "json")
	var sub struct{ ID string }
	if err := json.Unmarshal([]byte(created.Stdout), &sub); err != nil {
		t.Fatalf("create: %v: %s", err, created.Stderr)
	}
	seedDeliveries(t, m.dsn, sub.ID)
	r := clitest.Run(t, m.env, "subs", "deliveries", sub.ID, "--state", "dead", "--limit", "1", "-o", "table")
	if r.Code != 0 || strings.Contains(r.Stderr, "More deliveries follow") {
		t.Errorf("the only dead delivery fits one page: exit %d, stderr %q", r.Code, r.Stderr)
	}
	r = clitest.Run(t, m.env, "subs", "deliveries", sub.ID, "--limit", "1", "-o", "table")
	want := "More deliveries follow: hubctl subs deliveries " + sub.ID + " --limit 1 --cursor "
	if r.Code != 0 || !strings.Contains(r.Stderr, want) {
		t.Errorf("stderr %q lacks %q", r.Stderr, want)
	}
}
