package tenants_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type tenantJSON struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func decode[T any](t *testing.T, stdout string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("stdout is not the expected JSON: %v\n%s", err, stdout)
	}
	return v
}

func TestTenantLifecycle(t *testing.T) {
	db := clitest.Database(pgtest.DSN(t))

	r := clitest.Run(t, db, "tenants", "create", "acme", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("create: exit %d: %s", r.Code, r.Stderr)
	}
	created := decode[tenantJSON](t, r.Stdout)
	if created.ID != "acme" || created.Status != "active" || created.CreatedAt == "" {
		t.Errorf("create printed %+v", created)
	}

	r = clitest.Run(t, db, "tenants", "create", "acme")
	if r.Code != cmdutil.ExitFailure || !strings.Contains(r.Stderr, `tenant "acme" already exists`) {
		t.Errorf("second create: exit %d, stderr %q; want 1 saying it exists", r.Code, r.Stderr)
	}

	for _, step := range []struct{ verb, want string }{
		{"deactivate", "inactive"},
		{"deactivate", "inactive"},
		{"activate", "active"},
	} {
		r = clitest.Run(t, db, "tenants", step.verb, "acme", "-o", "json")
		if r.Code != 0 {
			t.Fatalf("%s: exit %d: %s", step.verb, r.Code, r.Stderr)
		}
		if got := decode[tenantJSON](t, r.Stdout); got.Status != step.want {
			t.Errorf("%s: status %q, want %q", step.verb, got.Status, step.want)
		}
	}

	r = clitest.Run(t, db, "tenants", "get", "acme", "-o", "json")
	if got := decode[tenantJSON](t, r.Stdout); r.Code != 0 || got.ID != "acme" || got.Status != "active" || got.CreatedAt != created.CreatedAt {
		t.Errorf("get: exit %d, %+v", r.Code, got)
	}
}

func TestTenantExitCodes(t *testing.T) {
	dsn := pgtest.DSN(t)
	if r := clitest.Run(t, clitest.Database(dsn), "tenants", "create", "acme"); r.Code != 0 {
		t.Fatalf("create: exit %d: %s", r.Code, r.Stderr)
	}
	rule := "[A-Za-z0-9][A-Za-z0-9._-]{0,127}"
	cases := []struct {
		name     string
		dsn      string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"get unknown", dsn, []string{"tenants", "get", "nobody"}, cmdutil.ExitNotFound, `tenant "nobody" not found`},
		{"activate unknown", dsn, []string{"tenants", "activate", "nobody"}, cmdutil.ExitNotFound, `tenant "nobody" not found`},
		{"deactivate unknown", dsn, []string{"tenants", "deactivate", "nobody"}, cmdutil.ExitNotFound, `tenant "nobody" not found`},
		// A value the hub's validation rejects exits 1 (the API answers it
		// 400, like any rejection); 2 is for the command line itself.
		{"create bad id", dsn, []string{"tenants", "create", "no spaces"}, cmdutil.ExitFailure, rule},
		{"get bad id", dsn, []string{"tenants", "get", "--", "-dash-first"}, cmdutil.ExitFailure, rule},
		// The id is judged before any database is needed.
		{"bad id without a database", "", []string{"tenants", "create", "a/b"}, cmdutil.ExitFailure, rule},
		{"no id", dsn, []string{"tenants", "get"}, cmdutil.ExitUsage, "accepts 1 arg"},
		{"bad output format", dsn, []string{"tenants", "get", "acme", "-o", "xml"}, cmdutil.ExitUsage, "invalid output format"},
		{"zero limit", dsn, []string{"tenants", "list", "--limit", "0"}, cmdutil.ExitUsage, "invalid --limit 0"},
		{"limit too large", dsn, []string{"tenants", "list", "--limit", "5000"}, cmdutil.ExitUsage, "invalid --limit 5000"},
		{"forged cursor", dsn, []string{"tenants", "list", "--cursor", "forged"}, cmdutil.ExitFailure, "invalid cursor"},
		{"no database configured", "", []string{"tenants", "get", "acme"}, cmdutil.ExitUsage, "STREAMING_HUB_POSTGRES_DSN"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := clitest.Run(t, clitest.Database(c.dsn), c.args...)
			if r.Code != c.wantCode || !strings.Contains(r.Stderr, c.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", r.Code, r.Stderr, c.wantCode, c.wantErr)
			}
			if r.Stdout != "" {
				t.Errorf("failed command printed %q on stdout", r.Stdout)
			}
		})
	}
}

func TestTenantTableAndYAML(t *testing.T) {
	db := clitest.Database(pgtest.DSN(t))
	if r := clitest.Run(t, db, "tenants", "create", "acme"); r.Code != 0 {
		t.Fatalf("create: exit %d: %s", r.Code, r.Stderr)
	}

	r := clitest.Run(t, db, "tenants", "get", "acme", "-o", "table")
	row := regexp.MustCompile(`(?m)^ID\s+STATUS\s+CREATED\s*\nacme\s+active\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s*$`)
	if r.Code != 0 || !row.MatchString(r.Stdout) {
		t.Errorf("table: exit %d:\n%s", r.Code, r.Stdout)
	}

	r = clitest.Run(t, db, "tenants", "get", "acme", "-o", "yaml")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "id: acme\nstatus: active\ncreated_at: ") {
		t.Errorf("yaml: exit %d:\n%s", r.Code, r.Stdout)
	}
}

func TestTenantListPages(t *testing.T) {
	db := clitest.Database(pgtest.DSN(t))
	for _, id := range []string{"charlie", "alpha", "bravo"} {
		if r := clitest.Run(t, db, "tenants", "create", id); r.Code != 0 {
			t.Fatalf("create %s: exit %d: %s", id, r.Code, r.Stderr)
		}
	}

	type page struct {
		Items      []tenantJSON `json:"items"`
		NextCursor *string      `json:"next_cursor"`
	}
	r := clitest.Run(t, db, "tenants", "list", "--limit", "2", "-o", "json")
	first := decode[page](t, r.Stdout)
	if r.Code != 0 || len(first.Items) != 2 || first.Items[0].ID != "alpha" || first.Items[1].ID != "bravo" || first.NextCursor == nil {
		t.Fatalf("first page: exit %d %s: %+v", r.Code, r.Stderr, first)
	}
	r = clitest.Run(t, db, "tenants", "list", "--limit", "2", "--cursor", *first.NextCursor, "-o", "json")
	second := decode[page](t, r.Stdout)
	if r.Code != 0 || len(second.Items) != 1 || second.Items[0].ID != "charlie" || second.NextCursor != nil {
		t.Errorf("second page: exit %d: %+v", r.Code, second)
	}

	// The table tells on stderr how to get the next page.
	r = clitest.Run(t, db, "tenants", "list", "--limit", "2", "-o", "table")
	if r.Code != 0 || strings.Count(r.Stdout, "\n") != 3 {
		t.Errorf("table page: exit %d:\n%s", r.Code, r.Stdout)
	}
	if want := "hubctl tenants list --limit 2 --cursor " + *first.NextCursor; !strings.Contains(r.Stderr, want) {
		t.Errorf("stderr %q lacks %q", r.Stderr, want)
	}

	// An empty roster is an empty list, not null.
	r = clitest.Run(t, clitest.Database(pgtest.DSN(t)), "tenants", "list", "-o", "json")
	if r.Code != 0 || strings.Join(strings.Fields(r.Stdout), "") != `{"items":[],"next_cursor":null}` {
		t.Errorf("empty list: exit %d: %s", r.Code, r.Stdout)
	}
}
