package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestDeadLetterInputIsCheckedBeforeTheDatabase(t *testing.T) {
	// No store: every case must be answered without one.
	svc := service.NewDeliveries(nil)
	ctx := context.Background()
	list := func(p hubapi.DeadLetterListParams) func() error {
		return func() error { _, err := svc.ListDeadLetters(ctx, "acme", p); return err }
	}
	replay := func(in hubapi.DeadLetterReplay) func() error {
		return func() error { _, err := svc.ReplayDeadLetters(ctx, "acme", in); return err }
	}
	tooMany := make([]string, service.MaxReplayIDs+1)
	for i := range tooMany {
		tooMany[i] = uuid.Must(uuid.NewV7()).String()
	}
	filter := func(f hubapi.DeadLetterFilter) hubapi.DeadLetterListParams {
		return hubapi.DeadLetterListParams{DeadLetterFilter: f}
	}
	cases := []struct {
		name      string
		call      func() error
		wantField string
	}{
		{"limit too large", list(hubapi.DeadLetterListParams{ListParams: hubapi.ListParams{Limit: hubapi.MaxPageLimit + 1}}), "limit"},
		{"unknown reason", list(filter(hubapi.DeadLetterFilter{Reason: "expired"})), "reason"},
		{"subscription id that is not a UUID", list(filter(hubapi.DeadLetterFilter{SubscriptionID: "orders"})), "subscription_id"},
		{"since that is not RFC 3339", list(filter(hubapi.DeadLetterFilter{Since: "yesterday"})), "since"},
		{"until without a zone", list(filter(hubapi.DeadLetterFilter{Until: "2026-01-02T03:04:05"})), "until"},
		{"empty window", list(filter(hubapi.DeadLetterFilter{Since: "2026-01-02T00:00:00Z", Until: "2026-01-02T00:00:00Z"})), "until"},
		{"forged cursor", list(hubapi.DeadLetterListParams{ListParams: hubapi.ListParams{Cursor: encodeTestCursor("dead-letters:12.x")}}), "cursor"},
		{"another listing's cursor", list(hubapi.DeadLetterListParams{ListParams: hubapi.ListParams{Cursor: encodeTestCursor("deliveries:12")}}), "cursor"},
		{"replay of an id that is not a UUID", replay(hubapi.DeadLetterReplay{IDs: []string{"42"}}), "ids"},
		{"replay of an empty id list", replay(hubapi.DeadLetterReplay{IDs: []string{}}), "ids"},
		{"replay of too many ids", replay(hubapi.DeadLetterReplay{IDs: tooMany}), "ids"},
		{"replay with a bad reason", replay(hubapi.DeadLetterReplay{Reason: "Exhausted"}), "reason"},
		{"replay with a bad since", replay(hubapi.DeadLetterReplay{Since: "0000-00-00"}), "since"},
	}
	for _, tc := range cases {
		code, field := codeOf(tc.call())
		if code != hubapi.CodeInvalidRequest || field != tc.wantField {
			t.Errorf("%s: code %q field %q, want invalid_request %q", tc.name, code, field, tc.wantField)
		}
	}
}

func TestDeadLettersPageAndReplay(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	if _, err := st.Pool.Exec(ctx, `INSERT INTO tenants (id) VALUES ('acme')`); err != nil {
		t.Fatal(err)
	}
	sub := uuid.Must(uuid.NewV7())
	if _, err := st.Pool.Exec(ctx, `
		INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, signing_secret)
		VALUES ($1, 'acme', 'hook', 'webhook', 'https://hooks.test:443', '{*}', 'sealed')`, sub); err != nil {
		t.Fatal(err)
	}
	// Five dead letters, two of which died at the same microsecond, so the
	// cursor's id tie-break is exercised.
	deadAt := []time.Time{deadBase, deadBase.Add(time.Minute), deadBase.Add(time.Minute), deadBase.Add(2 * time.Minute), deadBase.Add(3 * time.Minute)}
	for n, at := range deadAt {
		var seq int64
		err := st.Pool.QueryRow(ctx, `
			INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
			                    header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
			VALUES ('acme', $1, 'transaction.posted', '1.0.0', 1, 'midaz', 'studio.lerian.transaction.posted', $2,
			        '{}', '{}', '{}', 'topic', 0, $3)
			RETURNING seq`, fmt.Sprintf("0190b6a2-7c1e-7d3a-9f00-%012x", n), deadBase, n).Scan(&seq)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Pool.Exec(ctx, `
			INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, attempts, dead_reason, dead_at, last_status)
			VALUES ($1, 'acme', $2, $3, 'dead', 8, 'exhausted', $4, 503)`, uuid.Must(uuid.NewV7()), sub, seq, at); err != nil {
			t.Fatal(err)
		}
	}
	svc := service.NewDeliveries(st.Catalog)
	var ids []string
	p := hubapi.DeadLetterListParams{ListParams: hubapi.ListParams{Limit: 2}}
	for {
		page, err := svc.ListDeadLetters(ctx, "acme", p)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page.Items {
			if d.Reason != hubapi.DeadExhausted || d.EventType != "transaction.posted" || d.SubscriptionID != sub.String() || *d.LastStatus != 503 {
				t.Errorf("dead letter %+v", d)
			}
			ids = append(ids, d.ID)
		}
		if page.NextCursor == nil {
			break
		}
		p.Cursor = *page.NextCursor
	}
	if len(ids) != len(deadAt) {
		t.Fatalf("paged through %d dead letters, want %d: %v", len(ids), len(deadAt), ids)
	}

	dry, err := svc.ReplayDeadLetters(ctx, "acme", hubapi.DeadLetterReplay{Since: deadBase.Add(time.Minute).Format(time.RFC3339Nano), DryRun: true})
	if err != nil || dry != (hubapi.DeadLetterReplayResult{Matched: 4, DryRun: true}) {
		t.Fatalf("dry run = %+v, %v; want 4 matched", dry, err)
	}
	done, err := svc.ReplayDeadLetters(ctx, "acme", hubapi.DeadLetterReplay{IDs: ids[:3]})
	if err != nil || done != (hubapi.DeadLetterReplayResult{Matched: 3, Replayed: 3}) {
		t.Fatalf("replay = %+v, %v; want 3 of 3", done, err)
	}
	again, err := svc.ReplayDeadLetters(ctx, "acme", hubapi.DeadLetterReplay{IDs: ids[:3]})
	if err != nil || again != (hubapi.DeadLetterReplayResult{}) {
		t.Errorf("second replay = %+v, %v; want nothing left to replay", again, err)
	}
	other, err := svc.ReplayDeadLetters(ctx, "globex", hubapi.DeadLetterReplay{})
	if err != nil || other != (hubapi.DeadLetterReplayResult{}) {
		t.Errorf("another tenant's replay = %+v, %v; want it to see none", other, err)
	}
}

// deadBase is when the first seeded dead letter died, at PostgreSQL's
// microsecond precision.
var deadBase = time.Date(2026, 1, 2, 3, 4, 5, 678901000, time.UTC)
