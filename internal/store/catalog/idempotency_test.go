package catalog_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/lifecycle"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
)

func TestIdempotencyKeysAreClaimedOnceUntilTheyExpire(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	claim := func(now time.Time, fingerprint string) (bool, catalog.IdempotencyRecord) {
		t.Helper()
		ok, existing, err := st.ClaimIdempotencyKey(ctx, "tenant:acme", "k1", "acme", []byte(fingerprint), now,
			now.Add(-catalog.IdempotencyWindow), now.Add(-5*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		return ok, existing
	}
	if ok, _ := claim(t0, "a"); !ok {
		t.Fatal("a free key was not claimed")
	}
	ok, existing := claim(t0.Add(time.Minute), "a")
	if ok || existing.Done || string(existing.Fingerprint) != "a" || !existing.CreatedAt.Equal(t0) {
		t.Fatalf("duplicate claim: claimed %v, existing %+v; want the first claim in progress", ok, existing)
	}
	// Another scope's key of the same name is its own.
	if ok, _, err := st.ClaimIdempotencyKey(ctx, "admin", "k1", "", []byte("a"), t0, t0.Add(-time.Hour), t0); err != nil || !ok {
		t.Fatalf("the admin's k1: claimed %v, %v", ok, err)
	}
	if err := st.CompleteIdempotencyKey(ctx, "tenant:acme", "k1", t0, 201, "/v1/subscriptions/x", "v1:sealed"); err != nil {
		t.Fatal(err)
	}
	ok, existing = claim(t0.Add(time.Hour), "b")
	if ok || !existing.Done || existing.Status != 201 || existing.Location != "/v1/subscriptions/x" || existing.Response != "v1:sealed" {
		t.Fatalf("after completion: claimed %v, existing %+v", ok, existing)
	}
	// A finished key is not abandoned; past the window it is free again.
	if ok, _ := claim(t0.Add(catalog.IdempotencyWindow+time.Second), "b"); !ok {
		t.Fatal("an expired key was not claimed again")
	}

	// A claim never finished is taken over once abandoned; releasing frees it.
	later := t0.Add(48 * time.Hour)
	if ok, _, _ := st.ClaimIdempotencyKey(ctx, "tenant:acme", "k2", "acme", []byte("c"), later, later.Add(-catalog.IdempotencyWindow), later.Add(-5*time.Minute)); !ok {
		t.Fatal("k2 not claimed")
	}
	soon := later.Add(time.Minute)
	if ok, _, _ := st.ClaimIdempotencyKey(ctx, "tenant:acme", "k2", "acme", []byte("c"), soon, soon.Add(-catalog.IdempotencyWindow), soon.Add(-5*time.Minute)); ok {
		t.Fatal("a claim one minute old was taken over")
	}
	after := later.Add(6 * time.Minute)
	if ok, _, _ := st.ClaimIdempotencyKey(ctx, "tenant:acme", "k2", "acme", []byte("c"), after, after.Add(-catalog.IdempotencyWindow), after.Add(-5*time.Minute)); !ok {
		t.Fatal("an abandoned claim was not taken over")
	}
	if err := st.ReleaseIdempotencyKey(ctx, "tenant:acme", "k2", after); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReadIdempotencyKey(ctx, "tenant:acme", "k2"); !errorsIsNotFound(err) {
		t.Fatalf("released key reads %v, want not found", err)
	}
}

func errorsIsNotFound(err error) bool { return errors.Is(err, pg.ErrNotFound) }

func TestPruneDeletesIdempotencyKeysPastTheirWindow(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	for key, at := range map[string]time.Time{"old": now.Add(-25 * time.Hour), "fresh": now.Add(-time.Hour)} {
		if ok, _, err := st.ClaimIdempotencyKey(ctx, "admin", key, "", []byte("f"), at, at.Add(-time.Hour), at); err != nil || !ok {
			t.Fatalf("claim %s: %v %v", key, ok, err)
		}
	}
	policy := lifecycle.RetentionPolicy{Events: 168 * time.Hour, Deliveries: 168 * time.Hour, Quarantine: 720 * time.Hour}
	rep, err := st.Prune(ctx, now, policy, false)
	if err != nil {
		t.Fatal(err)
	}
	var removed int64
	for _, r := range rep.Removals {
		if r.Table == lifecycle.TableIdempotencyKeys {
			removed += r.Rows
		}
	}
	if removed != 1 {
		t.Errorf("prune removed %d idempotency keys, want 1: %+v", removed, rep.Removals)
	}
	if _, err := st.ReadIdempotencyKey(ctx, "admin", "old"); !errorsIsNotFound(err) {
		t.Errorf("old key: %v, want gone", err)
	}
	if _, err := st.ReadIdempotencyKey(ctx, "admin", "fresh"); err != nil {
		t.Errorf("fresh key: %v, want kept", err)
	}
}
