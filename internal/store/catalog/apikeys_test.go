package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
)

// newKey returns the insert for a key of tenant named name, with a token
// hash unique to the name.
func newKey(tenant, name string, at time.Time) catalog.NewAPIKey {
	return catalog.NewAPIKey{
		ID:          uuid.NewString(),
		TenantID:    tenant,
		Name:        name,
		TokenHash:   []byte("hash of " + tenant + "/" + name),
		TokenPrefix: "hub_" + name,
		CreatedAt:   at,
	}
}

func TestCreateAPIKeyAndAuthenticate(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	if _, err := st.CreateTenant(ctx, "acme", t0); err != nil {
		t.Fatal(err)
	}
	in := newKey("acme", "ci", t0)
	created, err := st.CreateAPIKey(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	want := catalog.APIKey{ID: in.ID, TenantID: "acme", Name: "ci", TokenPrefix: "hub_ci", CreatedAt: t0}
	if !sameKey(created, want) {
		t.Errorf("created %+v, want %+v", created, want)
	}

	holder, err := st.AuthenticateAPIKey(ctx, in.TokenHash, t0.Add(time.Second), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !sameKey(holder.Key, want) || holder.TenantStatus != catalog.TenantActive {
		t.Errorf("authenticated %+v, want %+v of an active tenant", holder, want)
	}

	if _, err := st.AuthenticateAPIKey(ctx, []byte("unknown"), t0, time.Minute); !errors.Is(err, pg.ErrNotFound) {
		t.Errorf("unknown hash: err = %v, want ErrNotFound", err)
	}
}

func TestCreateAPIKeyErrors(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	if _, err := st.CreateAPIKey(ctx, newKey("nobody", "ci", t0)); !errors.Is(err, pg.ErrNotFound) {
		t.Errorf("key of a missing tenant: err = %v, want ErrNotFound", err)
	}
	if _, err := st.CreateTenant(ctx, "acme", t0); err != nil {
		t.Fatal(err)
	}
	first := newKey("acme", "ci", t0)
	if _, err := st.CreateAPIKey(ctx, first); err != nil {
		t.Fatal(err)
	}
	again := newKey("acme", "ci", t0)
	if _, err := st.CreateAPIKey(ctx, again); !errors.Is(err, pg.ErrConflict) {
		t.Errorf("same token hash twice: err = %v, want ErrConflict", err)
	}
}

func TestAuthenticateRecordsLastUseAtMostOncePerInterval(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	if _, err := st.CreateTenant(ctx, "acme", t0); err != nil {
		t.Fatal(err)
	}
	in := newKey("acme", "ci", t0)
	if _, err := st.CreateAPIKey(ctx, in); err != nil {
		t.Fatal(err)
	}
	lastUsed := func() *time.Time {
		t.Helper()
		page, _, err := st.ListAPIKeys(ctx, "acme", nil, 10)
		if err != nil || len(page) != 1 {
			t.Fatalf("list: %v, %v", page, err)
		}
		return page[0].LastUsedAt
	}

	steps := []struct {
		at   time.Duration
		want time.Duration // last_used_at after authenticating at `at`
	}{
		{at: time.Second, want: time.Second},           // first use is recorded
		{at: 30 * time.Second, want: time.Second},      // within the minute: no write
		{at: 61 * time.Second, want: 61 * time.Second}, // a minute on: recorded
	}
	for _, step := range steps {
		if _, err := st.AuthenticateAPIKey(ctx, in.TokenHash, t0.Add(step.at), time.Minute); err != nil {
			t.Fatal(err)
		}
		if got := lastUsed(); got == nil || !got.Equal(t0.Add(step.want)) {
			t.Errorf("after use at +%v: last_used_at = %v, want +%v", step.at, got, step.want)
		}
	}

	if _, err := st.RevokeAPIKey(ctx, "acme", in.ID, t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	holder, err := st.AuthenticateAPIKey(ctx, in.TokenHash, t0.Add(time.Hour), time.Minute)
	if err != nil || holder.Key.RevokedAt == nil {
		t.Errorf("revoked key: %+v, %v; want it found with its revocation", holder, err)
	}
	if got := lastUsed(); !got.Equal(t0.Add(61 * time.Second)) {
		t.Errorf("a revoked key's use was recorded: last_used_at = %v", got)
	}
}

func TestListAPIKeysPagesPerTenant(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	for _, id := range []string{"acme", "globex"} {
		if _, err := st.CreateTenant(ctx, id, t0); err != nil {
			t.Fatal(err)
		}
	}
	// Two keys share a creation time, so the id breaks the tie.
	for i, at := range []time.Duration{0, time.Second, time.Second, 2 * time.Second} {
		if _, err := st.CreateAPIKey(ctx, newKey("acme", fmt.Sprint("k", i), t0.Add(at))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CreateAPIKey(ctx, newKey("globex", "other", t0)); err != nil {
		t.Fatal(err)
	}

	var seen []catalog.APIKey
	var after *catalog.APIKeyPosition
	for range 10 {
		page, more, err := st.ListAPIKeys(ctx, "acme", after, 3)
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, page...)
		if !more {
			break
		}
		last := page[len(page)-1]
		after = &catalog.APIKeyPosition{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	if len(seen) != 4 {
		t.Fatalf("listed %d keys of acme, want 4: %+v", len(seen), seen)
	}
	for i := 1; i < len(seen); i++ {
		prev, cur := seen[i-1], seen[i]
		if cur.TenantID != "acme" || cur.CreatedAt.Before(prev.CreatedAt) || (cur.CreatedAt.Equal(prev.CreatedAt) && cur.ID <= prev.ID) {
			t.Errorf("keys out of order or of another tenant: %+v then %+v", prev, cur)
		}
	}
	if _, _, err := st.ListAPIKeys(ctx, "acme", nil, 0); err == nil {
		t.Error("limit 0 accepted")
	}
}

func TestRevokeAPIKey(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	for _, id := range []string{"acme", "globex"} {
		if _, err := st.CreateTenant(ctx, id, t0); err != nil {
			t.Fatal(err)
		}
	}
	in := newKey("acme", "ci", t0)
	if _, err := st.CreateAPIKey(ctx, in); err != nil {
		t.Fatal(err)
	}

	if _, err := st.RevokeAPIKey(ctx, "globex", in.ID, t0); !errors.Is(err, pg.ErrNotFound) {
		t.Errorf("revoke through another tenant: err = %v, want ErrNotFound", err)
	}
	if _, err := st.RevokeAPIKey(ctx, "acme", uuid.NewString(), t0); !errors.Is(err, pg.ErrNotFound) {
		t.Errorf("revoke a missing key: err = %v, want ErrNotFound", err)
	}

	revokedAt := t0.Add(time.Hour)
	first, err := st.RevokeAPIKey(ctx, "acme", in.ID, revokedAt)
	if err != nil || first.RevokedAt == nil || !first.RevokedAt.Equal(revokedAt) {
		t.Fatalf("revoke: %+v, %v", first, err)
	}
	second, err := st.RevokeAPIKey(ctx, "acme", in.ID, revokedAt.Add(time.Hour))
	if err != nil || second.RevokedAt == nil || !second.RevokedAt.Equal(revokedAt) {
		t.Errorf("revoking again: %+v, %v; want the first revocation time kept", second, err)
	}
}

func sameKey(a, b catalog.APIKey) bool {
	return a.ID == b.ID && a.TenantID == b.TenantID && a.Name == b.Name && a.TokenPrefix == b.TokenPrefix &&
		a.CreatedAt.Equal(b.CreatedAt) && sameTime(a.LastUsedAt, b.LastUsedAt) && sameTime(a.RevokedAt, b.RevokedAt)
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}
