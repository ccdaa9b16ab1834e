package pg_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

// Migration 24's down turns every successful attempt folded into its job
// back into a delivery_attempts row, field by field, beside the rows that
// were there, and then drops the columns: nothing recorded is lost for a
// binary that predates the folding.
func TestFoldedAttemptsMigrationDownRestoresTheirRows(t *testing.T) {
	t.Parallel()
	dsn := pgtest.EmptyDSN(t)
	versions := embeddedVersions(t)
	at := slices.Index(versions, 24)
	if at < 0 {
		t.Fatal("migration 24 is not embedded")
	}
	mg := newMigrator(t, dsn)
	if err := mg.To(versions[at]); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, dsn)
	ctx := t.Context()
	started := time.Date(2026, 12, 1, 10, 0, 0, 123456000, time.UTC)
	type attempt struct {
		ID       uuid.UUID
		Job      uuid.UUID
		Number   int
		Started  time.Time
		Duration int
		Outcome  string
		Status   *int
		Error    *string
		Response []byte
	}
	status := func(s int) *int { return &s }
	text := func(s string) *string { return &s }
	retried, once, noAnswer := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	want := []attempt{
		// A failure, a row before and after.
		{uuid.Must(uuid.NewV7()), retried, 1, started, 30, "failed", status(503), text("HTTP 503"), []byte("busy")},
		// Then its success, folded.
		{uuid.Must(uuid.NewV7()), retried, 2, started.Add(time.Minute), 12, "succeeded", status(200), nil, []byte(`{"ok":true}`)},
		{uuid.Must(uuid.NewV7()), once, 1, started, 7, "succeeded", status(204), nil, nil},
		// No status (not every sink has one), no response.
		{uuid.Must(uuid.NewV7()), noAnswer, 1, started, 0, "succeeded", nil, nil, nil},
	}
	for i, job := range []uuid.UUID{retried, once, noAnswer} {
		if _, err := conn.Exec(ctx, `
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, attempts, recorded_attempts, succeeded_at)
VALUES ($1, 'acme', $2, $3, 'succeeded', 1, 1, now())`, job, uuid.Must(uuid.NewV7()), i+1); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range want {
		if a.Outcome == "failed" {
			if _, err := conn.Exec(ctx, `
INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome, status_code, error, response_snippet)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, a.ID, a.Job, a.Number, a.Started, a.Duration, a.Outcome, a.Status, a.Error, a.Response); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := conn.Exec(ctx, `
UPDATE delivery_jobs SET succeeded_attempt_id = $2, succeeded_attempt = $3, succeeded_started_at = $4,
    succeeded_duration_ms = $5, last_status = $6, succeeded_error = $7, succeeded_response = $8, recorded_attempts = $3
WHERE id = $1`, a.Job, a.ID, a.Number, a.Started, a.Duration, a.Status, a.Error, a.Response); err != nil {
			t.Fatal(err)
		}
	}

	if err := mg.To(versions[at-1]); err != nil {
		t.Fatalf("migrate down from 24: %v", err)
	}
	rows, err := conn.Query(ctx, `
SELECT id, job_id, attempt, started_at, duration_ms, outcome, status_code, error, response_snippet
FROM delivery_attempts`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[uuid.UUID]attempt{}
	for rows.Next() {
		var a attempt
		if err := rows.Scan(&a.ID, &a.Job, &a.Number, &a.Started, &a.Duration, &a.Outcome, &a.Status, &a.Error, &a.Response); err != nil {
			t.Fatal(err)
		}
		got[a.ID] = a
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("%d attempt rows after the down migration, want %d", len(got), len(want))
	}
	for _, w := range want {
		g, ok := got[w.ID]
		if !ok || g.Job != w.Job || g.Number != w.Number || !g.Started.Equal(w.Started) || g.Duration != w.Duration ||
			g.Outcome != w.Outcome || !equalPtr(g.Status, w.Status) || !equalPtr(g.Error, w.Error) || string(g.Response) != string(w.Response) ||
			(g.Response == nil) != (w.Response == nil) {
			t.Errorf("attempt %d of job %s = %+v (found %v), want %+v", w.Number, w.Job, g, ok, w)
		}
	}
	var columns int
	if err := conn.QueryRow(ctx, `
SELECT count(*) FROM information_schema.columns WHERE table_name = 'delivery_jobs' AND column_name LIKE 'succeeded\_attempt%'`).Scan(&columns); err != nil {
		t.Fatal(err)
	}
	if columns != 0 {
		t.Errorf("%d folded attempt columns left on delivery_jobs", columns)
	}
	// And up again: the down leaves a schema migration 24 applies to.
	if err := mg.To(versions[at]); err != nil {
		t.Fatalf("migrate up to 24 again: %v", err)
	}
}

func equalPtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}
