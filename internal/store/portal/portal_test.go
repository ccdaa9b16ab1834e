package portal

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func hash(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

func newStore(t *testing.T, tenants ...string) *Store {
	t.Helper()
	pool := pgtest.Pool(t)
	for _, id := range tenants {
		if _, err := pool.Exec(context.Background(), `INSERT INTO tenants (id) VALUES ($1)`, id); err != nil {
			t.Fatal(err)
		}
	}
	return New(pool)
}

func newSession(token string) NewSession {
	return NewSession{ID: uuid.Must(uuid.NewV7()).String(), TokenHash: hash(token)}
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestALinkOpensOneSessionOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t, "acme")
	if err := st.CreateLink(ctx, NewLink{TokenHash: hash("link"), Tenant: "acme", ReadOnly: true, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	// Two browsers open the link at once: one session between them.
	var wg sync.WaitGroup
	results := make([]error, 2)
	for i := range results {
		wg.Go(func() {
			_, results[i] = st.RedeemLink(ctx, hash("link"), newSession("cookie-"+string(rune('a'+i))), t0.Add(time.Minute))
		})
	}
	wg.Wait()
	won := 0
	for _, err := range results {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, pg.ErrNotFound):
			t.Fatalf("redeem: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d redemptions of one link succeeded, want 1", won)
	}
	cookie := "cookie-a"
	if results[0] != nil {
		cookie = "cookie-b"
	}
	s, err := st.Session(ctx, hash(cookie), t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if s.Tenant != "acme" || !s.ReadOnly || !s.ExpiresAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("session %+v, want acme's read-only one ending with the link", s)
	}
	if _, err := st.Session(ctx, hash(cookie), t0.Add(time.Hour)); !errors.Is(err, pg.ErrNotFound) {
		t.Errorf("session at its expiry: %v, want not found", err)
	}
}

func TestRefusedLinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t, "acme", "sleepy")
	for _, l := range []NewLink{
		{TokenHash: hash("expired"), Tenant: "acme", CreatedAt: t0, ExpiresAt: t0.Add(time.Minute)},
		{TokenHash: hash("inactive"), Tenant: "sleepy", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)},
	} {
		if err := st.CreateLink(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Pool.Exec(ctx, `UPDATE tenants SET status = 'inactive' WHERE id = 'sleepy'`); err != nil {
		t.Fatal(err)
	}
	for _, link := range []string{"expired", "inactive", "unknown"} {
		if _, err := st.RedeemLink(ctx, hash(link), newSession(link), t0.Add(time.Minute)); !errors.Is(err, pg.ErrNotFound) {
			t.Errorf("redeem the %s link: %v, want not found", link, err)
		}
	}
	err := st.CreateLink(ctx, NewLink{TokenHash: hash("orphan"), Tenant: "nobody", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)})
	if !errors.Is(err, pg.ErrNotFound) {
		t.Errorf("a link of a missing tenant: %v, want not found", err)
	}
}

func TestEndingSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t, "acme", "globex")
	open := func(link, cookie, tenant string) {
		t.Helper()
		if err := st.CreateLink(ctx, NewLink{TokenHash: hash(link), Tenant: tenant, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.RedeemLink(ctx, hash(link), newSession(cookie), t0); err != nil {
			t.Fatal(err)
		}
	}
	open("l1", "acme-1", "acme")
	open("l2", "acme-2", "acme")
	open("l3", "globex-1", "globex")
	open("l4", "console", "")

	n, err := st.EndTenantSessions(ctx, "acme", t0.Add(time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("ended %d sessions (%v), want acme's 2", n, err)
	}
	for cookie, live := range map[string]bool{"acme-1": false, "acme-2": false, "globex-1": true, "console": true} {
		s, err := st.Session(ctx, hash(cookie), t0.Add(2*time.Minute))
		if live != (err == nil) {
			t.Errorf("session %s: %v, want live=%v", cookie, err, live)
		}
		if cookie == "console" && err == nil && s.Tenant != "" {
			t.Errorf("the console session has tenant %q", s.Tenant)
		}
	}
	if err := st.EndSession(ctx, hash("globex-1"), t0.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Session(ctx, hash("globex-1"), t0.Add(3*time.Minute)); !errors.Is(err, pg.ErrNotFound) {
		t.Errorf("a signed-out session: %v, want not found", err)
	}
}

func TestIssuingALinkRemovesExpiredOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t, "acme")
	if err := st.CreateLink(ctx, NewLink{TokenHash: hash("old"), Tenant: "acme", CreatedAt: t0, ExpiresAt: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RedeemLink(ctx, hash("old"), newSession("old-cookie"), t0); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateLink(ctx, NewLink{TokenHash: hash("new"), Tenant: "acme", CreatedAt: t0.Add(time.Hour), ExpiresAt: t0.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	var links, sessions int
	if err := st.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM portal_links), (SELECT count(*) FROM portal_sessions)`).Scan(&links, &sessions); err != nil {
		t.Fatal(err)
	}
	if links != 1 || sessions != 0 {
		t.Errorf("%d links and %d sessions stored, want only the new link", links, sessions)
	}
}
