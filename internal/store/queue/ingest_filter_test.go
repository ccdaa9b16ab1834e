package queue

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
)

func setFilter(t *testing.T, st *testStore, subID, expr string) {
	t.Helper()
	if _, err := st.Pool.Exec(context.Background(),
		`UPDATE subscriptions SET filter = $2, updated_at = clock_timestamp() WHERE id = $1`, subID, expr); err != nil {
		t.Fatal(err)
	}
}

func jobsOf(t *testing.T, st *testStore, subID string) int64 {
	t.Helper()
	return queryCount(t, st, `SELECT count(*) FROM delivery_jobs WHERE subscription_id = $1`, subID)
}

func TestWriteIngestBatchAppliesFilters(t *testing.T) {
	st := ingestStore(t)
	big := addTestSubscription(t, st, "t-a", "webhook", []string{"*"})
	setFilter(t, st, big, `data.amount > 100`)
	posted := addTestSubscription(t, st, "t-a", "pull", []string{"*"})
	setFilter(t, st, posted, `type == "transaction.posted" && tenant_id == "t-a"`)
	broken := addTestSubscription(t, st, "t-a", "webhook", []string{"*"})
	setFilter(t, st, broken, `data.missing == 1`) // compiles; fails on every event
	unfiltered := addTestSubscription(t, st, "t-a", "webhook", []string{"*"})

	res := writeBatch(t, st, batchOf(0, 3,
		accepted(t, 0, "t-a", testEventID(1), []byte(`{"amount": 150}`)),
		accepted(t, 1, "t-a", testEventID(2), []byte(`{"amount": 5}`)),
		accepted(t, 2, "t-a", testEventID(3), []byte(`not json`)),
	))
	if n := queryCount(t, st, `SELECT count(*) FROM delivery_jobs WHERE subscription_id = $1 AND state = 'pending'`, big); n != 1 {
		t.Errorf("data.amount > 100: %d pending jobs, want 1", n)
	}
	if n := queryCount(t, st, `SELECT count(*) FROM pull_entries WHERE subscription_id = $1`, posted); n != 3 {
		t.Errorf("attribute filter on a pull subscription: %d entries, want 3", n)
	}
	// A failing filter matches nothing: each of its events is a dead
	// letter instead.
	if n := queryCount(t, st, `SELECT count(*) FROM delivery_jobs WHERE subscription_id = $1 AND state <> 'dead'`, broken); n != 0 {
		t.Errorf("a failing filter matched %d events", n)
	}
	if n := jobsOf(t, st, unfiltered); n != 3 {
		t.Errorf("no filter: %d jobs, want 3", n)
	}
	// broken fails on all three; big on the one that is not JSON.
	if len(res.FilterFailures) != 4 {
		t.Errorf("FilterFailures = %+v, want 4", res.FilterFailures)
	}

	// A new version of the filter takes effect with the next batch.
	setFilter(t, st, big, `data.amount < 100`)
	writeBatch(t, st, batchOf(0, 4, accepted(t, 3, "t-a", testEventID(4), []byte(`{"amount": 7}`))))
	if n := queryCount(t, st, `SELECT count(*) FROM delivery_jobs WHERE subscription_id = $1 AND state = 'pending'`, big); n != 2 {
		t.Errorf("after the filter changed: %d pending jobs, want 2", n)
	}
}

// TestFilterFailureIsAReplayableDeadLetter: an event whose filter fails is
// kept as a dead letter of reason filter_error naming the failure, only
// for push subscriptions, and a replay puts it back to pending like any
// other dead letter.
func TestFilterFailureIsAReplayableDeadLetter(t *testing.T) {
	ctx := context.Background()
	st := ingestStore(t)
	push := addTestSubscription(t, st, "t-a", "webhook", []string{"*"})
	setFilter(t, st, push, `data.missing == 1`)
	pull := addTestSubscription(t, st, "t-a", "pull", []string{"*"})
	setFilter(t, st, pull, `data.missing == 1`)
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	b := batchOf(0, 1, accepted(t, 0, "t-a", testEventID(1), []byte(`{"amount": 1}`)))
	b.ReceivedAt = at
	res := writeBatch(t, st, b)
	if len(res.FilterFailures) != 2 {
		t.Fatalf("FilterFailures = %+v, want the push and the pull subscription's", res.FilterFailures)
	}

	letters, _, err := st.ListDeadLetters(ctx, catalog.DeadLetterQuery{DeadLetterFilter: catalog.DeadLetterFilter{TenantID: "t-a", Reason: pg.DeadFilterError}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(letters) != 1 {
		t.Fatalf("dead letters = %+v, want the push subscription's one", letters)
	}
	d := letters[0]
	if d.SubscriptionID.String() != push || d.EventID != testEventID(1) || d.Reason != pg.DeadFilterError || !d.DeadAt.Equal(at) ||
		!strings.HasPrefix(d.LastError, "filter eval_error: ") || !strings.Contains(d.LastError, "missing") {
		t.Fatalf("dead letter = %+v", d)
	}
	if n := queryCount(t, st, `SELECT count(*) FROM pull_entries WHERE subscription_id = $1`, pull); n != 0 {
		t.Errorf("the pull subscription got %d entries", n)
	}

	setFilter(t, st, push, `has(data.missing) && data.missing == 1 || data.amount == 1`)
	replayed, err := st.ReplayDeadLetters(ctx, catalog.DeadLetterFilter{TenantID: "t-a", Reason: pg.DeadFilterError}, at.Add(time.Minute), false)
	if err != nil || replayed.Replayed != 1 {
		t.Fatalf("replay = %+v, %v; want one replayed", replayed, err)
	}
	if n := queryCount(t, st, `SELECT count(*) FROM delivery_jobs WHERE subscription_id = $1 AND state = 'pending'`, push); n != 1 {
		t.Errorf("after the replay %d pending jobs, want 1", n)
	}
}
