package service_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestGetDeliveryByAttemptID(t *testing.T) {
	f := newDeliveryFixture(t)
	ctx := context.Background()
	var attemptID string
	if err := f.st.Pool.QueryRow(ctx, `SELECT id::text FROM delivery_attempts WHERE job_id = $1 AND attempt = 2`,
		f.jobs[hubapi.DeliverySucceeded]).Scan(&attemptID); err != nil {
		t.Fatal(err)
	}
	got, err := f.svc.Get(ctx, "acme", attemptID)
	if err != nil {
		t.Fatalf("Get by attempt id: %v", err)
	}
	if got.ID != f.jobs[hubapi.DeliverySucceeded] || len(got.AttemptHistory) != 2 || got.AttemptHistory[1].ID != attemptID {
		t.Fatalf("Get by attempt id = delivery %s with %d attempts, want %s with the attempt among 2",
			got.ID, len(got.AttemptHistory), f.jobs[hubapi.DeliverySucceeded])
	}
	// Another tenant's attempt answers like a missing one.
	if _, err := f.svc.Get(ctx, "globex", attemptID); !isCode(err, service.CodeDeliveryNotFound) {
		t.Fatalf("another tenant's attempt id: %v, want delivery_not_found", err)
	}
	if _, err := f.svc.Get(ctx, "acme", uuid.NewString()); !isCode(err, service.CodeDeliveryNotFound) {
		t.Fatalf("unknown id: %v, want delivery_not_found", err)
	}
}

func TestGetEventShowsEveryDeliveryWithAttempts(t *testing.T) {
	f := newDeliveryFixture(t)
	ctx := context.Background()
	// The succeeded job's event also went to a pull subscription whose
	// cursor is past it.
	var eventID string
	var seq int64
	if err := f.st.Pool.QueryRow(ctx, `SELECT e.id::text, e.seq FROM delivery_jobs j JOIN events e ON e.seq = j.event_seq WHERE j.id = $1`,
		f.jobs[hubapi.DeliverySucceeded]).Scan(&eventID, &seq); err != nil {
		t.Fatal(err)
	}
	pullSub := uuid.Must(uuid.NewV7())
	for _, sql := range []string{
		`INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, verification_state) VALUES ($1, 'acme', 'puller', 'pull', 'pull', '{*}', 'active')`,
		`INSERT INTO pull_entries (subscription_id, event_seq) VALUES ($1, $2)`,
		`INSERT INTO pull_cursors (subscription_id, cursor_seq) VALUES ($1, $2)`,
	} {
		args := []any{pullSub}
		if strings.Count(sql, "$") > 1 {
			args = append(args, seq)
		}
		if _, err := f.st.Pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.st.Pool.Exec(ctx, `UPDATE events SET payload = convert_to('{"amount":"10.00"}', 'UTF8'), datacontenttype = 'application/json',
		header_keys = ARRAY[convert_to('ce_id', 'UTF8')], header_values = ARRAY['\xff'::bytea] WHERE seq = $1`, seq); err != nil {
		t.Fatal(err)
	}

	got, err := f.svc.GetEvent(ctx, "acme", eventID)
	if err != nil {
		t.Fatalf("GetEvent: %v", err)
	}
	if got.ID != eventID || got.Type != "account.created" || got.SizeBytes != len(`{"amount":"10.00"}`) ||
		string(got.Payload) != `{"amount":"10.00"}` || got.PayloadEncoding != "" {
		t.Errorf("event %+v, want the stored attributes and JSON payload", got.InboxEvent)
	}
	if len(got.Headers) != 1 || got.Headers[0].Key != "ce_id" || got.Headers[0].Encoding != hubapi.EncodingBase64 {
		t.Errorf("headers %+v, want ce_id with a base64 value", got.Headers)
	}
	if len(got.Deliveries) != 2 {
		t.Fatalf("deliveries %+v, want the push delivery and the pull entry", got.Deliveries)
	}
	push, pull := got.Deliveries[0], got.Deliveries[1]
	if push.SubscriptionName != "hook" || push.Delivery == nil || push.Delivery.ID != f.jobs[hubapi.DeliverySucceeded] ||
		len(push.Delivery.AttemptHistory) != 2 || push.Delivery.AttemptHistory[0].Attempt != 1 {
		t.Errorf("push delivery %+v, want job %s with its 2 attempts in order", push, f.jobs[hubapi.DeliverySucceeded])
	}
	if pull.SubscriptionID != pullSub.String() || pull.SinkType != "pull" || pull.Pulled == nil || !*pull.Pulled || pull.Delivery != nil {
		t.Errorf("pull entry %+v, want puller, pulled", pull)
	}

	if _, err := f.svc.GetEvent(ctx, "globex", eventID); !isCode(err, service.CodeEventNotFound) {
		t.Errorf("another tenant's event: %v, want event_not_found", err)
	}
	if _, err := f.svc.GetEvent(ctx, "acme", "not-a-uuid"); !isCode(err, service.CodeEventNotFound) {
		t.Errorf("malformed id: %v, want event_not_found", err)
	}
}

func TestListEventsSearchesAndPages(t *testing.T) {
	f := newDeliveryFixture(t)
	ctx := context.Background()
	// Five acme events (one per delivery state), received a minute apart;
	// two of them from another source with a subject.
	if _, err := f.st.Pool.Exec(ctx, `UPDATE events SET received_at = $1::timestamptz + kafka_offset * interval '1 minute'`, fixtureTime); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Pool.Exec(ctx, `UPDATE events SET source = 'ledger', subject = 'acct-7' WHERE kafka_offset IN (1, 3)`); err != nil {
		t.Fatal(err)
	}
	list := func(p hubapi.EventListParams) []int64 {
		t.Helper()
		var offsets []int64
		for range 10 {
			page, err := f.svc.ListEvents(ctx, "acme", p)
			if err != nil {
				t.Fatalf("ListEvents(%+v): %v", p, err)
			}
			for _, e := range page.Items {
				if e.Payload != nil || e.Headers != nil {
					t.Fatalf("listing item carries payload or headers: %+v", e)
				}
				offsets = append(offsets, e.Offset)
			}
			if page.NextCursor == nil {
				return offsets
			}
			p.Cursor = *page.NextCursor
		}
		t.Fatal("listing does not end")
		return nil
	}
	at := func(minutes int) string {
		return fixtureTime.Add(time.Duration(minutes) * time.Minute).Format(time.RFC3339)
	}
	for _, tc := range []struct {
		name string
		p    hubapi.EventListParams
		want string
	}{
		{"everything, newest first, in pages of 2", hubapi.EventListParams{ListParams: hubapi.ListParams{Limit: 2}}, "[4 3 2 1 0]"},
		{"by source", hubapi.EventListParams{EventFilter: hubapi.EventFilter{Source: "ledger"}}, "[3 1]"},
		{"by subject", hubapi.EventListParams{EventFilter: hubapi.EventFilter{Subject: "acct-7"}}, "[3 1]"},
		{"by type", hubapi.EventListParams{EventFilter: hubapi.EventFilter{Type: "account.created"}}, "[4 3 2 1 0]"},
		{"other type", hubapi.EventListParams{EventFilter: hubapi.EventFilter{Type: "account.deleted"}}, "[]"},
		{"by type pattern", hubapi.EventListParams{EventFilter: hubapi.EventFilter{Type: "account.*"}}, "[4 3 2 1 0]"},
		{"by another type pattern", hubapi.EventListParams{EventFilter: hubapi.EventFilter{Type: "hub.*"}}, "[]"},
		{"every type", hubapi.EventListParams{EventFilter: hubapi.EventFilter{Type: "*"}}, "[4 3 2 1 0]"},
		{"time window", hubapi.EventListParams{EventFilter: hubapi.EventFilter{Since: at(1), Until: at(3)}}, "[2 1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := json.Marshal(list(tc.p))
			if want := strings.ReplaceAll(tc.want, " ", ","); string(got) != want && !(want == "[]" && string(got) == "null") {
				t.Errorf("offsets %s, want %s", got, want)
			}
		})
	}
	page, err := f.svc.ListEvents(ctx, "globex", hubapi.EventListParams{})
	if err != nil || len(page.Items) != 0 {
		t.Errorf("another tenant's inbox: %+v, %v; want empty", page, err)
	}
	for _, p := range []hubapi.EventListParams{
		{EventFilter: hubapi.EventFilter{Since: "yesterday"}},
		{EventFilter: hubapi.EventFilter{Since: at(3), Until: at(1)}},
		{ListParams: hubapi.ListParams{Cursor: encodeTestCursor("deliveries:5")}},
		{EventFilter: hubapi.EventFilter{Source: strings.Repeat("s", 2000)}},
		{EventFilter: hubapi.EventFilter{Type: "Account.*"}},
		{EventFilter: hubapi.EventFilter{Type: "acc*"}},
	} {
		if code, _ := codeOf(func() error { _, err := f.svc.ListEvents(ctx, "acme", p); return err }()); code != hubapi.CodeInvalidRequest {
			t.Errorf("ListEvents(%+v) code %q, want invalid_request", p, code)
		}
	}
}
