package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func openStore(t *testing.T) *storetest.Store {
	t.Helper()
	st, err := storetest.Connect(context.Background(), pgtest.DSN(t), pg.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(st.Close)
	return st
}

// clock is a settable test clock at PostgreSQL's microsecond precision.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func newClock() *clock { return &clock{now: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)} }

func TestTenantLifecycle(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	st := openStore(t)
	svc := service.NewTenants(st.Catalog, st.Lifecycle, clk.Now)

	created, err := svc.Create(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if created.ID != "acme" || created.Status != hubapi.TenantActive || !created.CreatedAt.Equal(clk.now) || !created.UpdatedAt.Equal(clk.now) {
		t.Errorf("created %+v", created)
	}

	clk.now = clk.now.Add(time.Hour)
	inactive, err := svc.SetStatus(ctx, "acme", hubapi.TenantInactive)
	if err != nil {
		t.Fatal(err)
	}
	if inactive.Status != hubapi.TenantInactive || !inactive.UpdatedAt.Equal(clk.now) || !inactive.CreatedAt.Equal(created.CreatedAt) {
		t.Errorf("after deactivate: %+v", inactive)
	}

	got, err := svc.Get(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if got != inactive {
		t.Errorf("get = %+v, want %+v", got, inactive)
	}
}

func TestTenantErrors(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	svc := service.NewTenants(st.Catalog, st.Lifecycle, newClock().Now)
	if _, err := svc.Create(ctx, "acme"); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name      string
		call      func() error
		wantCode  string
		wantField string
		wantStore error
	}{
		{"create twice", func() error { _, err := svc.Create(ctx, "acme"); return err }, service.CodeTenantAlreadyExists, "", pg.ErrConflict},
		{"get unknown", func() error { _, err := svc.Get(ctx, "nobody"); return err }, hubapi.CodeTenantNotFound, "", pg.ErrNotFound},
		{"set status of unknown", func() error { _, err := svc.SetStatus(ctx, "nobody", hubapi.TenantActive); return err }, hubapi.CodeTenantNotFound, "", pg.ErrNotFound},
		{"create bad id", func() error { _, err := svc.Create(ctx, "no spaces"); return err }, hubapi.CodeInvalidRequest, "id", nil},
		{"get bad id", func() error { _, err := svc.Get(ctx, ""); return err }, hubapi.CodeInvalidRequest, "id", nil},
		{"bad status", func() error { _, err := svc.SetStatus(ctx, "acme", "paused"); return err }, hubapi.CodeInvalidRequest, "status", nil},
		{"bad limit", func() error { _, err := svc.List(ctx, hubapi.ListParams{Limit: 5000}); return err }, hubapi.CodeInvalidRequest, "limit", nil},
		{"bad cursor", func() error { _, err := svc.List(ctx, hubapi.ListParams{Cursor: "nope"}); return err }, hubapi.CodeInvalidRequest, "cursor", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			if code, field := codeOf(err); code != c.wantCode || field != c.wantField {
				t.Errorf("err = %v: code %q field %q, want %q %q", err, code, field, c.wantCode, c.wantField)
			}
			if c.wantStore != nil && !errors.Is(err, c.wantStore) {
				t.Errorf("err = %v does not wrap %v", err, c.wantStore)
			}
		})
	}
}

// codeOf returns the API code (and field) a service error carries.
func codeOf(err error) (code, field string) {
	var v *hubapi.ValidationError
	var nf *hubapi.NotFoundError
	var c *hubapi.ConflictError
	switch {
	case errors.As(err, &v):
		return v.Code, v.Field
	case errors.As(err, &nf):
		return nf.Code, ""
	case errors.As(err, &c):
		return c.Code, ""
	}
	return "", ""
}

func TestValidationComesBeforeTheDatabase(t *testing.T) {
	// No store at all: a malformed request must be turned away without one.
	tenants := service.NewTenants(nil, nil, time.Now)
	if _, err := tenants.Create(context.Background(), "bad id"); err == nil {
		t.Error("bad id accepted")
	}
	quarantine := service.NewQuarantine(nil)
	if _, err := quarantine.List(context.Background(), hubapi.QuarantineListParams{ListParams: hubapi.ListParams{Limit: -1}}); err == nil {
		t.Error("bad limit accepted")
	}
}

func TestListTenantsFollowsCursors(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	svc := service.NewTenants(st.Catalog, st.Lifecycle, newClock().Now)
	for _, id := range []string{"e", "b", "d", "a", "c"} {
		if _, err := svc.Create(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	params := hubapi.ListParams{Limit: 2}
	for range 10 {
		page, err := svc.List(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		for _, tn := range page.Items {
			ids = append(ids, tn.ID)
		}
		if page.NextCursor == nil {
			break
		}
		params.Cursor = *page.NextCursor
	}
	if fmt.Sprint(ids) != "[a b c d e]" {
		t.Errorf("ids = %v, want [a b c d e]", ids)
	}
}

func TestQuarantineListPagesAndShowsItemsAsSpecified(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	base := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for i := range 5 {
		_, err := st.Pool.Exec(ctx, `
			INSERT INTO quarantine (reason, detail, topic, kafka_partition, kafka_offset,
			                        record_key, header_keys, header_values, value, received_at, value_size, value_sha256)
			VALUES ($1, 'why', 'lerian.streaming.a_b.c', 0, $2, $3, $4, $5, $6::bytea, $7, octet_length($6::bytea), sha256($6::bytea))`,
			[]string{"missing_id", "invalid_time"}[i%2], i, []byte("acme"),
			[][]byte{[]byte("ce-tenantid")}, [][]byte{{0xff, byte(i)}}, []byte(`{}`), base.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
	}
	svc := service.NewQuarantine(st.Catalog)

	var offsets []int64
	params := hubapi.QuarantineListParams{ListParams: hubapi.ListParams{Limit: 2}}
	for range 10 {
		page, err := svc.List(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range page.Items {
			offsets = append(offsets, item.Offset)
		}
		if page.NextCursor == nil {
			break
		}
		params.Cursor = *page.NextCursor
	}
	if fmt.Sprint(offsets) != "[4 3 2 1 0]" {
		t.Errorf("offsets newest first = %v, want [4 3 2 1 0]", offsets)
	}

	page, err := svc.List(ctx, hubapi.QuarantineListParams{ListParams: hubapi.ListParams{Limit: 1}, Reason: "invalid_time"})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Items []map[string]any `json:"items"`
		Next  *string          `json:"next_cursor"`
	}
	if err := json.Unmarshal(raw, &decoded); err != nil {
		t.Fatal(err)
	}
	if len(decoded.Items) != 1 || decoded.Next == nil {
		t.Fatalf("page %s: want one item and a next cursor", raw)
	}
	item := decoded.Items[0]
	wantHeaders := `[map[encoding:base64 key:ce-tenantid value:/wM=]]`
	if item["reason"] != "invalid_time" || item["offset"] != float64(3) || item["key"] != "acme" ||
		fmt.Sprint(item["headers"]) != wantHeaders || item["value_prefix_base64"] != "e30=" || item["value_size"] != float64(2) ||
		item["header_count"] != float64(1) || item["received_at"] != "2025-06-01T12:03:00Z" {
		t.Errorf("item = %s", raw)
	}

	// The next page of a filtered listing keeps its filter.
	next, err := svc.List(ctx, hubapi.QuarantineListParams{ListParams: hubapi.ListParams{Limit: 1, Cursor: *decoded.Next}, Reason: "invalid_time"})
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Items) != 1 || next.Items[0].Offset != 1 || next.NextCursor != nil {
		t.Errorf("second filtered page = %+v, want offset 1 and no next cursor", next)
	}
}
