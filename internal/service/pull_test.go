package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestPullInputIsCheckedBeforeTheDatabase(t *testing.T) {
	svc := service.NewPull(nil) // every case must be answered without a store
	validSub := uuid.Must(uuid.NewV7()).String()
	cases := []struct {
		name      string
		tenant    string
		sub       string
		params    hubapi.PullParams
		wantCode  string
		wantField string
	}{
		{"limit below 1", "acme", validSub, hubapi.PullParams{Limit: -1}, hubapi.CodeInvalidRequest, "limit"},
		{"limit above 1000", "acme", validSub, hubapi.PullParams{Limit: hubapi.MaxPageLimit + 1}, hubapi.CodeInvalidRequest, "limit"},
		{"negative after", "acme", validSub, hubapi.PullParams{After: new(int64(-1))}, hubapi.CodeInvalidRequest, "after"},
		{"subscription id that is not a UUID", "acme", "orders", hubapi.PullParams{}, service.CodeSubscriptionNotFound, ""},
		{"tenant id no tenant can have", "a/b", validSub, hubapi.PullParams{}, service.CodeSubscriptionNotFound, ""},
	}
	for _, tc := range cases {
		_, err := svc.Read(context.Background(), tc.tenant, tc.sub, tc.params)
		if code, field := codeOf(err); code != tc.wantCode || field != tc.wantField {
			t.Errorf("%s: code %q field %q, want %q %q", tc.name, code, field, tc.wantCode, tc.wantField)
		}
	}
}

func TestNextPullCursor(t *testing.T) {
	cases := []struct {
		name  string
		seqs  []int64
		limit int
		want  int64 // 0: null
	}{
		{"empty page", nil, 10, 0},
		{"short page", []int64{4, 7}, 10, 0},
		{"full page", []int64{4, 7, 9}, 3, 9},
		{"full page of one", []int64{12}, 1, 12},
	}
	for _, tc := range cases {
		got := service.NextPullCursor(tc.seqs, tc.limit)
		if (got == nil) != (tc.want == 0) || got != nil && *got != tc.want {
			t.Errorf("%s: next cursor %v, want %d (0 for null)", tc.name, got, tc.want)
		}
	}
}

func TestPullPayload(t *testing.T) {
	cases := []struct {
		name, contentType, data   string
		wantPayload, wantEncoding string
	}{
		{"JSON object", "application/json", `{"amount": 10}`, `{"amount": 10}`, ""},
		{"JSON with parameters", "application/json; charset=utf-8", `[1,2]`, `[1,2]`, ""},
		{"structured +json type", "application/cloudevents+json", `"text"`, `"text"`, ""},
		{"no content type, JSON data", "", `{"a":1}`, `{"a":1}`, ""},
		{"no content type, other data", "", "plain", `"cGxhaW4="`, "base64"},
		{"JSON type, data that does not parse", "application/json", `{"a":`, `"eyJhIjo="`, "base64"},
		{"JSON type, invalid UTF-8 in a string", "application/json", "\"\xff\"", `"Iv8i"`, "base64"},
		{"JSON type, empty data", "application/json", "", `""`, "base64"},
		{"binary", "application/octet-stream", "\x00\x01\xfe", `"AAH+"`, "base64"},
		{"text that happens to be JSON", "text/plain", `42`, `"NDI="`, "base64"},
		{"malformed content type", "application/json;;", `{}`, `"e30="`, "base64"},
	}
	for _, tc := range cases {
		payload, encoding := service.PullPayload(tc.contentType, []byte(tc.data))
		if string(payload) != tc.wantPayload || encoding != tc.wantEncoding {
			t.Errorf("%s: payload %s encoding %q, want %s %q", tc.name, payload, encoding, tc.wantPayload, tc.wantEncoding)
		}
		if !json.Valid(payload) {
			t.Errorf("%s: payload %s is not JSON", tc.name, payload)
		}
	}
}

// pullFixture is acme with two pull subscriptions and a webhook one, and
// globex with a pull subscription of its own.
type pullFixture struct {
	st                        *storetest.Store
	svc                       *service.Pull
	orders, audit, hook, glbx string
}

func newPullFixture(t *testing.T) *pullFixture {
	t.Helper()
	st := openStore(t)
	f := &pullFixture{st: st, svc: service.NewPull(st.Queue)}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := st.Pool.Exec(context.Background(), sql, args...); err != nil {
			t.Fatalf("%s: %v", strings.Fields(sql)[0:3], err)
		}
	}
	exec(`INSERT INTO tenants (id) VALUES ('acme'), ('globex')`)
	pull := func(tenant string) string {
		id := uuid.Must(uuid.NewV7()).String()
		exec(`INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, verification_state)
			VALUES ($1, $2, 'feed', 'pull', 'pull', '{*}', 'active')`, id, tenant)
		exec(`INSERT INTO pull_cursors (subscription_id) VALUES ($1)`, id)
		return id
	}
	f.orders, f.audit, f.glbx = pull("acme"), pull("acme"), pull("globex")
	f.hook = uuid.Must(uuid.NewV7()).String()
	exec(`INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, verification_state, signing_secret)
		VALUES ($1, 'acme', 'hook', 'webhook', 'https://hooks.test:443', '{*}', 'active', 'sealed')`, f.hook)
	return f
}

// add stores n events of tenant, matched to subs, with the given content
// type and data.
func (f *pullFixture) add(t *testing.T, tenant string, n int, contentType, data string, subs ...string) {
	t.Helper()
	_, err := f.st.Pool.Exec(context.Background(), `
		WITH ev AS (
		    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time, subject,
		                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset, datacontenttype)
		    SELECT $1, gen_random_uuid(), 'transaction.posted', '1.2.0', 1, 'midaz', 'studio.lerian.midaz.transaction.posted',
		           $2, 'tx-1', '{}', '{}', $3, 'topic', 0, g, nullif($4, '')
		    FROM generate_series(1, $5) g
		    RETURNING seq)
		INSERT INTO pull_entries (subscription_id, event_seq) SELECT s, seq FROM ev, unnest($6::uuid[]) s`,
		tenant, fixtureTime, []byte(data), contentType, n, subs)
	if err != nil {
		t.Fatalf("add events: %v", err)
	}
}

func TestPullReadPagesAndAcks(t *testing.T) {
	f := newPullFixture(t)
	ctx := context.Background()
	f.add(t, "acme", 250, "application/json", `{"amount":10}`, f.orders)

	// The default limit is 100; full pages carry next_cursor, the short
	// last one null.
	var got []int64
	var nextCursors []*int64
	for range 4 {
		page, err := f.svc.Read(ctx, "acme", f.orders, hubapi.PullParams{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Items {
			got = append(got, e.Seq)
		}
		nextCursors = append(nextCursors, page.NextCursor)
	}
	if len(got) != 250 {
		t.Fatalf("read %d events over four pages, want 250", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("seqs out of order at %d: %d after %d", i, got[i], got[i-1])
		}
	}
	if nextCursors[0] == nil || *nextCursors[0] != got[99] || nextCursors[1] == nil || *nextCursors[1] != got[199] ||
		nextCursors[2] != nil || nextCursors[3] != nil {
		t.Errorf("next cursors %v, want %d, %d, null, null", nextCursors, got[99], got[199])
	}

	// The maximum limit is served whole.
	page, err := f.svc.Read(ctx, "acme", f.orders, hubapi.PullParams{Limit: hubapi.MaxPageLimit, After: new(int64(0))})
	if err != nil || len(page.Items) != 250 || page.NextCursor != nil {
		t.Errorf("limit 1000 from 0: %d items, next %v, %v", len(page.Items), page.NextCursor, err)
	}
	// A page exactly as long as the limit cannot know it is the last: it
	// carries next_cursor, and the read after it comes back empty.
	page, err = f.svc.Read(ctx, "acme", f.orders, hubapi.PullParams{Limit: 50, After: &got[199]})
	if err != nil || len(page.Items) != 50 || page.NextCursor == nil || *page.NextCursor != got[249] {
		t.Errorf("exact last page: %d items, next %v, %v", len(page.Items), page.NextCursor, err)
	}
}

func TestPullItemView(t *testing.T) {
	f := newPullFixture(t)
	f.add(t, "acme", 1, "application/json", `{"amount": 10}`, f.orders)
	f.add(t, "acme", 1, "application/octet-stream", "\x00\xff", f.orders)
	page, err := f.svc.Read(context.Background(), "acme", f.orders, hubapi.PullParams{})
	if err != nil || len(page.Items) != 2 {
		t.Fatalf("read: %+v, %v", page, err)
	}
	raw, err := json.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	at := fixtureTime.Format(time.RFC3339)
	for _, fragment := range []string{
		`"type":"transaction.posted","ceType":"studio.lerian.midaz.transaction.posted","source":"midaz","tenantId":"acme",` +
			`"schemaVersion":"1.2.0","subject":"tx-1","time":"` + at + `","receivedAt":"`,
		`"dataContentType":"application/json","payload":{"amount":10}}`,
		`"dataContentType":"application/octet-stream","payload":"AP8=","payloadEncoding":"base64"}`,
		`"next_cursor":null`,
	} {
		if !strings.Contains(string(raw), fragment) {
			t.Errorf("page lacks %s:\n%s", fragment, raw)
		}
	}
	if uuid.Validate(page.Items[0].CEID) != nil || page.Items[0].Seq >= page.Items[1].Seq {
		t.Errorf("items %+v", page.Items)
	}
}

func TestPullScope(t *testing.T) {
	f := newPullFixture(t)
	ctx := context.Background()
	f.add(t, "acme", 3, "application/json", `{}`, f.orders, f.audit)
	f.add(t, "acme", 2, "application/json", `{}`, f.orders)
	f.add(t, "globex", 4, "application/json", `{}`, f.glbx)

	count := func(tenant, sub string) int {
		t.Helper()
		page, err := f.svc.Read(ctx, tenant, sub, hubapi.PullParams{})
		if err != nil {
			t.Fatalf("read %s of %s: %v", sub, tenant, err)
		}
		for _, e := range page.Items {
			if e.TenantID != tenant {
				t.Errorf("%s read an event of %s", tenant, e.TenantID)
			}
		}
		return len(page.Items)
	}
	if n := count("acme", f.orders); n != 5 {
		t.Errorf("orders: %d events, want 5", n)
	}
	if n := count("acme", f.audit); n != 3 {
		t.Errorf("audit: %d events, want 3 (reading orders must not have acked them)", n)
	}
	if n := count("globex", f.glbx); n != 4 {
		t.Errorf("globex: %d events, want 4", n)
	}

	cases := []struct {
		name, tenant, sub, want string
	}{
		{"another tenant's subscription", "acme", f.glbx, service.CodeSubscriptionNotFound},
		{"a subscription under another tenant", "globex", f.orders, service.CodeSubscriptionNotFound},
		{"missing subscription", "acme", uuid.Must(uuid.NewV7()).String(), service.CodeSubscriptionNotFound},
		{"push subscription", "acme", f.hook, service.CodeNotAPullSubscription},
	}
	for _, tc := range cases {
		_, err := f.svc.Read(ctx, tc.tenant, tc.sub, hubapi.PullParams{})
		if code, _ := codeOf(err); code != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
	var conflict *hubapi.ConflictError
	_, err := f.svc.Read(ctx, "acme", f.hook, hubapi.PullParams{})
	if !errors.As(err, &conflict) || !strings.Contains(conflict.Message, "not a pull subscription") {
		t.Errorf("push subscription: %v", err)
	}
}
