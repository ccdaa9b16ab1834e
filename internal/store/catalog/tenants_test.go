package catalog_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
)

// PostgreSQL keeps microseconds; test clocks stay at that precision so that
// times compare equal after a round trip.
var t0 = time.Date(2025, 3, 4, 5, 6, 7, 123456000, time.UTC)

func TestCreateTenant(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)

	got, err := st.CreateTenant(ctx, "acme", t0)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	want := catalog.Tenant{ID: "acme", Status: catalog.TenantActive, CreatedAt: t0, UpdatedAt: t0}
	if !sameTenant(got, want) {
		t.Errorf("create returned %+v, want %+v", got, want)
	}
	read, err := st.GetTenant(ctx, "acme")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if !sameTenant(read, want) {
		t.Errorf("get returned %+v, want %+v", read, want)
	}
}

func TestCreateTenantTwiceConflictsAndKeepsTheFirst(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	if _, err := st.CreateTenant(ctx, "acme", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetTenantStatus(ctx, "acme", catalog.TenantInactive, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}

	_, err := st.CreateTenant(ctx, "acme", t0.Add(time.Hour))
	if !errors.Is(err, pg.ErrConflict) {
		t.Fatalf("second create: err = %v, want ErrConflict", err)
	}
	if !strings.Contains(err.Error(), `"acme"`) {
		t.Errorf("conflict message %q does not name the tenant", err)
	}
	got, err := st.GetTenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != catalog.TenantInactive || !got.CreatedAt.Equal(t0) {
		t.Errorf("existing tenant changed by a failed create: %+v", got)
	}
}

func TestGetTenantNotFound(t *testing.T) {
	_, err := storetest.Open(t).GetTenant(context.Background(), "nobody")
	if !errors.Is(err, pg.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), `"nobody"`) {
		t.Errorf("message %q does not name the tenant", err)
	}
}

func TestSetTenantStatus(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	if _, err := st.CreateTenant(ctx, "acme", t0); err != nil {
		t.Fatal(err)
	}

	steps := []struct {
		name        string
		status      catalog.TenantStatus
		at          time.Time
		wantUpdated time.Time
	}{
		{"deactivate", catalog.TenantInactive, t0.Add(time.Minute), t0.Add(time.Minute)},
		{"deactivate again changes nothing", catalog.TenantInactive, t0.Add(2 * time.Minute), t0.Add(time.Minute)},
		{"activate", catalog.TenantActive, t0.Add(3 * time.Minute), t0.Add(3 * time.Minute)},
	}
	for _, step := range steps {
		got, err := st.SetTenantStatus(ctx, "acme", step.status, step.at)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		want := catalog.Tenant{ID: "acme", Status: step.status, CreatedAt: t0, UpdatedAt: step.wantUpdated}
		if !sameTenant(got, want) {
			t.Errorf("%s: got %+v, want %+v", step.name, got, want)
		}
	}

	if _, err := st.SetTenantStatus(ctx, "nobody", catalog.TenantActive, t0); !errors.Is(err, pg.ErrNotFound) {
		t.Errorf("unknown tenant: err = %v, want ErrNotFound", err)
	}
}

func TestListTenantsPagesInIDOrder(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	// Created out of order, listed by id.
	for i, id := range []string{"delta", "alpha", "echo", "charlie", "bravo"} {
		if _, err := st.CreateTenant(ctx, id, t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}

	var pages [][]string
	after := ""
	for {
		tenants, more, err := st.ListTenants(ctx, after, 2)
		if err != nil {
			t.Fatalf("list after %q: %v", after, err)
		}
		page := make([]string, len(tenants))
		for i, tn := range tenants {
			page[i] = tn.ID
		}
		pages = append(pages, page)
		if !more {
			break
		}
		after = tenants[len(tenants)-1].ID
	}
	want := [][]string{{"alpha", "bravo"}, {"charlie", "delta"}, {"echo"}}
	if !equalPages(pages, want) {
		t.Errorf("pages = %v, want %v", pages, want)
	}

	// A page that ends exactly at the last tenant says nothing follows.
	tenants, more, err := st.ListTenants(ctx, "charlie", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(tenants) != 2 || more {
		t.Errorf("last full page: %d tenants, more = %v; want 2, false", len(tenants), more)
	}
}

func TestListTenantsEmptyAndBadLimit(t *testing.T) {
	st := storetest.Open(t)
	tenants, more, err := st.ListTenants(context.Background(), "", 10)
	if err != nil || len(tenants) != 0 || more {
		t.Errorf("empty roster: %v, more = %v, err = %v", tenants, more, err)
	}
	if _, _, err := st.ListTenants(context.Background(), "", 0); err == nil {
		t.Error("limit 0 accepted")
	}
}

func sameTenant(a, b catalog.Tenant) bool {
	return a.ID == b.ID && a.Status == b.Status && a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt)
}

func equalPages(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], ",") != strings.Join(b[i], ",") {
			return false
		}
	}
	return true
}

func TestLoadRoster(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	if _, err := st.Pool.Exec(ctx, `INSERT INTO tenants (id, status) VALUES ('t-on', 'active'), ('t-off', 'inactive')`); err != nil {
		t.Fatal(err)
	}
	roster, err := st.LoadRoster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]event.TenantStatus{"t-on": event.TenantActive, "t-off": event.TenantInactive}
	if len(roster) != len(want) || roster["t-on"] != want["t-on"] || roster["t-off"] != want["t-off"] {
		t.Fatalf("LoadRoster = %v, want %v", roster, want)
	}
}
