package store

import (
	"context"
	"testing"
)

func setFilter(t *testing.T, st *Store, subID, expr string) {
	t.Helper()
	if _, err := st.Pool.Exec(context.Background(),
		`UPDATE subscriptions SET filter = $2, updated_at = clock_timestamp() WHERE id = $1`, subID, expr); err != nil {
		t.Fatal(err)
	}
}

func jobsOf(t *testing.T, st *Store, subID string) int64 {
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
	if n := jobsOf(t, st, big); n != 1 {
		t.Errorf("data.amount > 100: %d jobs, want 1", n)
	}
	if n := queryCount(t, st, `SELECT count(*) FROM pull_entries WHERE subscription_id = $1`, posted); n != 3 {
		t.Errorf("attribute filter on a pull subscription: %d entries, want 3", n)
	}
	if n := jobsOf(t, st, broken); n != 0 {
		t.Errorf("a failing filter matched %d events", n)
	}
	if n := jobsOf(t, st, unfiltered); n != 3 {
		t.Errorf("no filter: %d jobs, want 3", n)
	}
	// broken fails on all three; big on the one that is not JSON.
	if res.FilterErrors != 4 {
		t.Errorf("FilterErrors = %d, want 4", res.FilterErrors)
	}

	// A new version of the filter takes effect with the next batch.
	setFilter(t, st, big, `data.amount < 100`)
	writeBatch(t, st, batchOf(0, 4, accepted(t, 3, "t-a", testEventID(4), []byte(`{"amount": 7}`))))
	if n := jobsOf(t, st, big); n != 2 {
		t.Errorf("after the filter changed: %d jobs, want 2", n)
	}
}
