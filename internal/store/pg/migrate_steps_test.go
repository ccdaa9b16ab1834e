package pg_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

// v1Tables are the tables v1Data fills; every later migration must keep
// their rows, in the columns migration 1 gave them.
var v1Tables = []string{
	"tenants", "subscriptions", "events", "delivery_jobs", "delivery_attempts",
	"pull_entries", "pull_cursors", "quarantine", "kafka_offsets",
}

// TestEveryMigrationKeepsData holds the rows of v1Data while each migration
// after the first runs one step up, then its down and its up again: a
// migration that loses, changes or cannot read existing rows fails here.
// Migrations with conversions of their own (such as the storage lifecycle)
// add their own checks in a dedicated test.
func TestEveryMigrationKeepsData(t *testing.T) {
	t.Parallel()
	versions := embeddedVersions(t)
	dsn := pgtest.EmptyDSN(t)
	mg := newMigrator(t, dsn)
	if err := mg.To(versions[0]); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, dsn)
	if _, err := conn.Exec(t.Context(), v1Data); err != nil {
		t.Fatalf("fill the schema of migration %d: %v", versions[0], err)
	}
	digests := v1Digests(t, dsn)
	want := digestRows(t, dsn, digests)

	for i, v := range versions[1:] {
		prev := versions[i]
		if err := mg.To(v); err != nil {
			t.Fatalf("migrate %d -> %d with data: %v", prev, v, err)
		}
		if got := digestRows(t, dsn, digests); !maps.Equal(got, want) {
			t.Errorf("rows changed by migration %d up:\n before %v\n after  %v", v, want, got)
		}
		if err := mg.To(prev); err != nil {
			t.Fatalf("migrate %d down to %d with data: %v", v, prev, err)
		}
		if got := digestRows(t, dsn, digests); !maps.Equal(got, want) {
			t.Errorf("rows changed by migration %d down:\n before %v\n after  %v", v, want, got)
		}
		if err := mg.To(v); err != nil {
			t.Fatalf("migrate %d -> %d again: %v", prev, v, err)
		}
	}
	latest := versions[len(versions)-1]
	assertStatus(t, mg, "after every step", pg.SchemaStatus{Current: latest, Latest: latest})
}

// v1Digests returns, per table, a query digesting every row over the
// columns the table has now, so later migrations may add columns freely.
func v1Digests(t *testing.T, dsn string) map[string]string {
	t.Helper()
	conn := connect(t, dsn)
	out := map[string]string{}
	for _, table := range v1Tables {
		var cols []string
		err := conn.QueryRow(t.Context(), `
SELECT array_agg(quote_ident(column_name::text) ORDER BY ordinal_position)
FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1`, table).Scan(&cols)
		if err != nil || len(cols) == 0 {
			t.Fatalf("columns of %s: %v (%d columns)", table, err, len(cols))
		}
		row := "ROW(" + strings.Join(cols, ", ") + ")::text"
		out[table] = "SELECT md5(string_agg(r, '|' ORDER BY r)) FROM (SELECT " + row + " AS r FROM " + table + ") s"
	}
	return out
}

func digestRows(t *testing.T, dsn string, digests map[string]string) map[string]string {
	t.Helper()
	conn := connect(t, dsn)
	out := map[string]string{}
	for table, sql := range digests {
		var digest *string
		if err := conn.QueryRow(t.Context(), sql).Scan(&digest); err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		if digest == nil {
			t.Fatalf("read %s: the table is empty", table)
		}
		out[table] = *digest
	}
	return out
}
