package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
)

// newSubscription returns a valid row of tenantID with the given sink type;
// webhooks get a (fake) secret envelope, as the schema demands.
func newSubscription(t *testing.T, tenantID, sinkType string, at time.Time) catalog.Subscription {
	t.Helper()
	sub := catalog.Subscription{
		ID:                uuid.Must(uuid.NewV7()),
		TenantID:          tenantID,
		Name:              "orders",
		SinkType:          sinkType,
		SinkConfig:        json.RawMessage(`{"url": "https://example.test/hook"}`),
		Destination:       "https://example.test:443",
		EventTypes:        []string{"transaction.*"},
		SchemaMajor:       1,
		AttemptTimeout:    10 * time.Second,
		Enabled:           true,
		VerificationState: "pending",
		SignatureScheme:   "lerian",
		CreatedAt:         at,
	}
	if sinkType == "webhook" {
		sub.SigningSecret = "v1:k:sealed-secret"
	}
	return sub
}

func createSubscriptionTenant(t *testing.T, st *storetest.Store, id string) {
	t.Helper()
	if _, err := st.CreateTenant(context.Background(), id, t0); err != nil {
		t.Fatal(err)
	}
}

func TestCreateSubscriptionRoundTripsEveryColumn(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	createSubscriptionTenant(t, st, "acme")

	expires := t0.Add(24 * time.Hour)
	sub := newSubscription(t, "acme", "sqs", t0)
	sub.SinkConfig = json.RawMessage(`{"queue_url": "https://sqs.test/q", "region": "eu-west-1"}`)
	sub.SinkCredentials = "v1:k:sealed-credentials"
	sub.SinkCredentialFields = []string{"access_key_id", "secret_access_key"}
	sub.Origin = "midaz"
	sub.RetrySchedule = []string{"1s", "5m"}
	sub.AttemptTimeout = 1500 * time.Millisecond
	sub.Enabled = false
	sub.VerificationState = "failed"
	sub.VerificationError = "queue does not exist"
	sub.PreviousSecretExpiresAt = &expires

	created, err := st.CreateSubscription(ctx, sub, 0)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	read, err := st.GetSubscription(ctx, "acme", sub.ID)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	for name, got := range map[string]catalog.Subscription{"create": created, "get": read} {
		want := sub
		want.UpdatedAt = t0
		assertSameSubscription(t, name, got, want)
	}
}

// assertSameSubscription compares rows after normalising what PostgreSQL
// rewrites: jsonb layout and time zones.
func assertSameSubscription(t *testing.T, name string, got, want catalog.Subscription) {
	t.Helper()
	if !jsonEqual(got.SinkConfig, want.SinkConfig) {
		t.Errorf("%s: sink config %s, want %s", name, got.SinkConfig, want.SinkConfig)
	}
	got.SinkConfig, want.SinkConfig = nil, nil
	if !got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) ||
		!sameTimePtr(got.PreviousSecretExpiresAt, want.PreviousSecretExpiresAt) {
		t.Errorf("%s: times created %v updated %v previous %v, want %v %v %v", name,
			got.CreatedAt, got.UpdatedAt, got.PreviousSecretExpiresAt, want.CreatedAt, want.UpdatedAt, want.PreviousSecretExpiresAt)
	}
	got.CreatedAt, got.UpdatedAt, got.PreviousSecretExpiresAt = time.Time{}, time.Time{}, nil
	want.CreatedAt, want.UpdatedAt, want.PreviousSecretExpiresAt = time.Time{}, time.Time{}, nil
	if want.SinkCredentialFields == nil {
		want.SinkCredentialFields = []string{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func sameTimePtr(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

func TestCreateSubscriptionForUnknownTenant(t *testing.T) {
	st := storetest.Open(t)
	_, err := st.CreateSubscription(context.Background(), newSubscription(t, "nobody", "webhook", t0), 0)
	if !errors.Is(err, pg.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if want := `not found: tenant "nobody"`; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}

func TestCreatePullSubscriptionGetsItsCursor(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	createSubscriptionTenant(t, st, "acme")
	pull := newSubscription(t, "acme", "pull", t0)
	webhook := newSubscription(t, "acme", "webhook", t0)
	for _, sub := range []catalog.Subscription{pull, webhook} {
		if _, err := st.CreateSubscription(ctx, sub, 0); err != nil {
			t.Fatal(err)
		}
	}
	var cursors []uuid.UUID
	rows, err := st.Pool.Query(ctx, `SELECT subscription_id FROM pull_cursors WHERE cursor_seq = 0`)
	if err != nil {
		t.Fatal(err)
	}
	var id uuid.UUID
	for rows.Next() {
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		cursors = append(cursors, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cursors, []uuid.UUID{pull.ID}) {
		t.Errorf("cursors at 0 for %v, want only the pull subscription %v", cursors, pull.ID)
	}
}

func TestSubscriptionsAreScopedToTheirTenant(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	createSubscriptionTenant(t, st, "acme")
	createSubscriptionTenant(t, st, "globex")
	sub := newSubscription(t, "acme", "webhook", t0)
	if _, err := st.CreateSubscription(ctx, sub, 0); err != nil {
		t.Fatal(err)
	}

	checks := map[string]func() error{
		"get": func() error { _, err := st.GetSubscription(ctx, "globex", sub.ID); return err },
		"update": func() error {
			_, err := st.UpdateSubscription(ctx, "globex", sub.ID, t0, func(s *catalog.Subscription) error {
				s.Name = "stolen"
				return nil
			})
			return err
		},
		"delete": func() error { _, err := st.DeleteSubscription(ctx, "globex", sub.ID, t0); return err },
	}
	for name, check := range checks {
		if err := check(); !errors.Is(err, pg.ErrNotFound) {
			t.Errorf("%s from another tenant: err = %v, want ErrNotFound", name, err)
		}
	}
	if page, _, err := st.ListSubscriptions(ctx, "globex", nil, 10); err != nil || len(page) != 0 {
		t.Errorf("list of another tenant = %v, %v; want empty", page, err)
	}
	if got, err := st.GetSubscription(ctx, "acme", sub.ID); err != nil || got.Name != "orders" {
		t.Errorf("owner's row after foreign attempts: %+v, %v", got, err)
	}
}

// TestSignatureSchemesRoundTrip: both schemes, and the previous secret's
// own scheme after a switch, are stored, read and changed; the schema
// refuses any other scheme.
func TestSignatureSchemesRoundTrip(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	createSubscriptionTenant(t, st, "acme")
	sub := newSubscription(t, "acme", "webhook", t0)
	sub.SignatureScheme = ""
	created, err := st.CreateSubscription(ctx, sub, 0)
	if err != nil {
		t.Fatal(err)
	}
	if created.SignatureScheme != "lerian" || created.PreviousSignatureScheme != "" {
		t.Errorf("default schemes %q/%q, want lerian and none", created.SignatureScheme, created.PreviousSignatureScheme)
	}
	expires := t0.Add(24 * time.Hour)
	switched, err := st.UpdateSubscription(ctx, "acme", sub.ID, t0.Add(time.Hour), func(s *catalog.Subscription) error {
		s.SignatureScheme, s.PreviousSignatureScheme = "standard-webhooks", "lerian"
		s.PreviousSecret, s.PreviousSecretExpiresAt = "v1:k:sealed-previous", &expires
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read, err := st.GetSubscription(ctx, "acme", sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]catalog.Subscription{"update": switched, "get": read} {
		if got.SignatureScheme != "standard-webhooks" || got.PreviousSignatureScheme != "lerian" {
			t.Errorf("%s: schemes %q/%q, want standard-webhooks/lerian", name, got.SignatureScheme, got.PreviousSignatureScheme)
		}
	}
	_, err = st.UpdateSubscription(ctx, "acme", sub.ID, t0.Add(2*time.Hour), func(s *catalog.Subscription) error {
		s.SignatureScheme = "svix"
		return nil
	})
	if err == nil {
		t.Fatal("the schema took signature_scheme svix")
	}
	if _, err := st.DeleteSubscription(ctx, "acme", sub.ID, t0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	gone, err := st.SubscriptionsByID(ctx, []uuid.UUID{sub.ID})
	if err != nil || len(gone) != 1 {
		t.Fatalf("read deleted row: %v %v", gone, err)
	}
	if gone[0].PreviousSignatureScheme != "" || gone[0].PreviousSecret != "" {
		t.Errorf("delete kept the previous secret's scheme %q", gone[0].PreviousSignatureScheme)
	}
}

func TestUpdateSubscription(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	createSubscriptionTenant(t, st, "acme")
	sub := newSubscription(t, "acme", "webhook", t0)
	if _, err := st.CreateSubscription(ctx, sub, 0); err != nil {
		t.Fatal(err)
	}
	later := t0.Add(time.Hour)

	updated, err := st.UpdateSubscription(ctx, "acme", sub.ID, later, func(s *catalog.Subscription) error {
		s.Name = "renamed"
		s.EventTypes = append(s.EventTypes, "account.created")
		s.RetrySchedule = []string{"0s"}
		s.Origin = "midaz"
		s.FailingSince = &t0
		// Not written back: fixed for life.
		s.SinkType = "pull"
		s.TenantID = "globex"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Name != "renamed" || !slices.Equal(updated.EventTypes, []string{"transaction.*", "account.created"}) ||
		!slices.Equal(updated.RetrySchedule, []string{"0s"}) || updated.Origin != "midaz" ||
		!sameTimePtr(updated.FailingSince, &t0) || !updated.UpdatedAt.Equal(later) {
		t.Errorf("updated row %+v", updated)
	}
	if updated.SinkType != "webhook" || updated.TenantID != "acme" || !updated.CreatedAt.Equal(t0) {
		t.Errorf("immutable columns changed: %+v", updated)
	}

	unchanged, err := st.UpdateSubscription(ctx, "acme", sub.ID, later.Add(time.Hour), func(*catalog.Subscription) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !unchanged.UpdatedAt.Equal(later) {
		t.Errorf("a no-op update moved updated_at to %v", unchanged.UpdatedAt)
	}

	// A change stamped by a clock that runs behind is still a newer
	// version: dispatch tells versions apart by updated_at alone.
	behind, err := st.UpdateSubscription(ctx, "acme", sub.ID, t0, func(s *catalog.Subscription) error {
		s.Name = "renamed again"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !behind.UpdatedAt.After(later) {
		t.Errorf("a change stamped %v after version %v got updated_at %v; want a newer version", t0, later, behind.UpdatedAt)
	}

	refusal := errors.New("refused")
	_, err = st.UpdateSubscription(ctx, "acme", sub.ID, later, func(s *catalog.Subscription) error {
		s.Name = "half-done"
		return refusal
	})
	if err != refusal {
		t.Errorf("change error came back as %v, want it unwrapped", err)
	}
	if got, _ := st.GetSubscription(ctx, "acme", sub.ID); got.Name != "renamed again" {
		t.Errorf("a refused change was written: name %q", got.Name)
	}
}

func TestDeleteSubscriptionCancelsPendingJobsAndErasesSecrets(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	createSubscriptionTenant(t, st, "acme")
	sub := newSubscription(t, "acme", "webhook", t0)
	other := newSubscription(t, "acme", "webhook", t0)
	for _, s := range []catalog.Subscription{sub, other} {
		if _, err := st.CreateSubscription(ctx, s, 0); err != nil {
			t.Fatal(err)
		}
	}
	jobs := []struct {
		subscription uuid.UUID
		seq          int64
		state        string
		want         string
	}{
		{sub.ID, 1, "pending", "canceled"},
		{sub.ID, 2, "pending", "canceled"},
		{sub.ID, 3, "in_flight", "in_flight"},
		{sub.ID, 4, "succeeded", "succeeded"},
		{other.ID, 1, "pending", "pending"},
	}
	for _, j := range jobs {
		_, err := st.Pool.Exec(ctx, `
			INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, lease_until)
			VALUES ($1, 'acme', $2, $3, $4, CASE WHEN $4 = 'in_flight' THEN now() END)`,
			uuid.Must(uuid.NewV7()), j.subscription, j.seq, j.state)
		if err != nil {
			t.Fatal(err)
		}
	}

	deletedAt := t0.Add(time.Hour)
	canceled, err := st.DeleteSubscription(ctx, "acme", sub.ID, deletedAt)
	if err != nil {
		t.Fatal(err)
	}
	if canceled != 2 {
		t.Errorf("canceled %d jobs, want 2", canceled)
	}
	for _, j := range jobs {
		var state string
		if err := st.Pool.QueryRow(ctx, `SELECT state FROM delivery_jobs WHERE subscription_id = $1 AND event_seq = $2`,
			j.subscription, j.seq).Scan(&state); err != nil {
			t.Fatal(err)
		}
		if state != j.want {
			t.Errorf("job %d of %v: state %s, want %s", j.seq, j.subscription, state, j.want)
		}
	}

	var secret *string
	var deleted time.Time
	if err := st.Pool.QueryRow(ctx, `SELECT signing_secret, deleted_at FROM subscriptions WHERE id = $1`, sub.ID).
		Scan(&secret, &deleted); err != nil {
		t.Fatal(err)
	}
	if secret != nil || !deleted.Equal(deletedAt) {
		t.Errorf("deleted row: secret %v, deleted_at %v", secret, deleted)
	}
	if _, err := st.GetSubscription(ctx, "acme", sub.ID); !errors.Is(err, pg.ErrNotFound) {
		t.Errorf("get after delete: err = %v, want ErrNotFound", err)
	}
	if _, err := st.DeleteSubscription(ctx, "acme", sub.ID, deletedAt); !errors.Is(err, pg.ErrNotFound) {
		t.Errorf("second delete: err = %v, want ErrNotFound", err)
	}
}

func TestListSubscriptionsPagesInCreationOrder(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	createSubscriptionTenant(t, st, "acme")
	createSubscriptionTenant(t, st, "globex")
	// Two rows share a created_at, so the id must break the tie; a foreign
	// and a deleted row must never show.
	var want []uuid.UUID
	for _, at := range []time.Time{t0, t0.Add(time.Second), t0.Add(time.Second), t0.Add(2 * time.Second), t0.Add(3 * time.Second)} {
		sub := newSubscription(t, "acme", "webhook", at)
		if _, err := st.CreateSubscription(ctx, sub, 0); err != nil {
			t.Fatal(err)
		}
		want = append(want, sub.ID)
	}
	if _, err := st.CreateSubscription(ctx, newSubscription(t, "globex", "webhook", t0), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DeleteSubscription(ctx, "acme", want[3], t0); err != nil {
		t.Fatal(err)
	}
	want = slices.Delete(want, 3, 4)
	slices.SortStableFunc(want[1:3], func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })

	var got []uuid.UUID
	var after *catalog.SubscriptionPosition
	pages := 0
	for {
		page, more, err := st.ListSubscriptions(ctx, "acme", after, 2)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, s := range page {
			got = append(got, s.ID)
		}
		if !more {
			break
		}
		last := page[len(page)-1]
		after = &catalog.SubscriptionPosition{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	if !slices.Equal(got, want) || pages != 2 {
		t.Errorf("listed %v in %d pages, want %v in 2", got, pages, want)
	}
	if _, _, err := st.ListSubscriptions(ctx, "acme", nil, 0); err == nil {
		t.Error("limit 0 accepted")
	}
}

func TestCreateSubscriptionStopsAtTheTenantLimit(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	createSubscriptionTenant(t, st, "acme")
	createSubscriptionTenant(t, st, "globex")
	const limit = 3
	var acme []catalog.Subscription
	for range limit {
		sub, err := st.CreateSubscription(ctx, newSubscription(t, "acme", "webhook", t0), limit)
		if err != nil {
			t.Fatal(err)
		}
		acme = append(acme, sub)
	}

	_, err := st.CreateSubscription(ctx, newSubscription(t, "acme", "pull", t0), limit)
	var refused *catalog.SubscriptionLimitError
	if !errors.As(err, &refused) || !errors.Is(err, pg.ErrConflict) {
		t.Fatalf("create past the limit: err = %v, want a SubscriptionLimitError matching ErrConflict", err)
	}
	if refused.TenantID != "acme" || refused.Limit != limit {
		t.Errorf("refusal names tenant %q limit %d, want acme %d", refused.TenantID, refused.Limit, limit)
	}
	if n := liveSubscriptions(t, st, "acme"); n != limit {
		t.Errorf("acme has %d live subscriptions after the refusal, want %d", n, limit)
	}
	var cursors int
	if err := st.Pool.QueryRow(ctx, `SELECT count(*) FROM pull_cursors`).Scan(&cursors); err != nil || cursors != 0 {
		t.Errorf("the refused pull subscription left %d cursors (%v)", cursors, err)
	}

	if _, err := st.CreateSubscription(ctx, newSubscription(t, "globex", "webhook", t0), limit); err != nil {
		t.Errorf("another tenant is refused by acme's count: %v", err)
	}
	if _, err := st.DeleteSubscription(ctx, "acme", acme[0].ID, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateSubscription(ctx, newSubscription(t, "acme", "webhook", t0), limit); err != nil {
		t.Errorf("a deleted subscription still counts: %v", err)
	}
	if _, err := st.CreateSubscription(ctx, newSubscription(t, "nobody", "webhook", t0), limit); !errors.Is(err, pg.ErrNotFound) {
		t.Errorf("unknown tenant under a limit: err = %v, want ErrNotFound", err)
	}
}

// TestConcurrentCreatesNeverExceedTheTenantLimit races creates through two
// stores, as two serve processes would, on one database.
func TestConcurrentCreatesNeverExceedTheTenantLimit(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	pool, err := pg.Open(ctx, st.Pool.Config().ConnString(), pg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	other := storetest.New(pool)
	createSubscriptionTenant(t, st, "acme")
	const limit, attempts = 5, 24

	start := make(chan struct{})
	errs := make(chan error, attempts)
	var wg sync.WaitGroup
	for i := range attempts {
		via := []*storetest.Store{st, other}[i%2]
		wg.Go(func() {
			<-start
			_, err := via.CreateSubscription(ctx, newSubscription(t, "acme", "webhook", t0), limit)
			errs <- err
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	created, refused := 0, 0
	for err := range errs {
		var limitErr *catalog.SubscriptionLimitError
		switch {
		case err == nil:
			created++
		case errors.As(err, &limitErr):
			refused++
		default:
			t.Errorf("create: %v", err)
		}
	}
	if created != limit || refused != attempts-limit {
		t.Errorf("%d created, %d refused, want %d and %d", created, refused, limit, attempts-limit)
	}
	if n := liveSubscriptions(t, st, "acme"); n != limit {
		t.Errorf("acme has %d live subscriptions, want %d", n, limit)
	}
}

func liveSubscriptions(t *testing.T, st *storetest.Store, tenantID string) int {
	t.Helper()
	var n int
	err := st.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM subscriptions WHERE tenant_id = $1 AND deleted_at IS NULL`, tenantID).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
