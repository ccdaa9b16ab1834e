package tenants_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/iostreams"
	"github.com/hubctl/hubctl/internal/cli/tenants"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// hubctl runs `hubctl <args>` with the tenants command mounted under a bare
// root and dsn as the configured database ("" for none).
func hubctl(t *testing.T, dsn string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios, LookupEnv: func(k string) (string, bool) {
		if k == "STREAMING_HUB_POSTGRES_DSN" && dsn != "" {
			return dsn, true
		}
		return "", false
	}}
	root := &cobra.Command{
		Use:           "hubctl",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			f.UseFlags(cmd.Flags(), "")
			return nil
		},
	}
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	root.AddCommand(tenants.NewCmd(f))
	cmdutil.MarkUsageErrors(root)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		fmt.Fprintln(errOut, "Error: "+err.Error())
	}
	return cmdutil.ExitCode(err), out.String(), errOut.String()
}

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
	dsn := pgtest.DSN(t)

	code, stdout, stderr := hubctl(t, dsn, "tenants", "create", "acme", "-o", "json")
	if code != 0 {
		t.Fatalf("create: exit %d: %s", code, stderr)
	}
	created := decode[tenantJSON](t, stdout)
	if created.ID != "acme" || created.Status != "active" || created.CreatedAt == "" {
		t.Errorf("create printed %+v", created)
	}

	code, _, stderr = hubctl(t, dsn, "tenants", "create", "acme")
	if code != cmdutil.ExitFailure || !strings.Contains(stderr, `tenant "acme" already exists`) {
		t.Errorf("second create: exit %d, stderr %q; want 1 saying it exists", code, stderr)
	}

	for _, step := range []struct{ verb, want string }{
		{"deactivate", "inactive"},
		{"deactivate", "inactive"},
		{"activate", "active"},
	} {
		code, stdout, stderr = hubctl(t, dsn, "tenants", step.verb, "acme", "-o", "json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", step.verb, code, stderr)
		}
		if got := decode[tenantJSON](t, stdout); got.Status != step.want {
			t.Errorf("%s: status %q, want %q", step.verb, got.Status, step.want)
		}
	}

	code, stdout, _ = hubctl(t, dsn, "tenants", "get", "acme", "-o", "json")
	if got := decode[tenantJSON](t, stdout); code != 0 || got.ID != "acme" || got.Status != "active" || got.CreatedAt != created.CreatedAt {
		t.Errorf("get: exit %d, %+v", code, got)
	}
}

func TestTenantExitCodes(t *testing.T) {
	dsn := pgtest.DSN(t)
	if code, _, stderr := hubctl(t, dsn, "tenants", "create", "acme"); code != 0 {
		t.Fatalf("create: exit %d: %s", code, stderr)
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
		{"create bad id", dsn, []string{"tenants", "create", "no spaces"}, cmdutil.ExitUsage, rule},
		{"get bad id", dsn, []string{"tenants", "get", "--", "-dash-first"}, cmdutil.ExitUsage, rule},
		// The id is judged before any database is needed.
		{"bad id without a database", "", []string{"tenants", "create", "a/b"}, cmdutil.ExitUsage, rule},
		{"no id", dsn, []string{"tenants", "get"}, cmdutil.ExitUsage, "accepts 1 arg"},
		{"bad output format", dsn, []string{"tenants", "get", "acme", "-o", "xml"}, cmdutil.ExitUsage, "invalid output format"},
		{"zero limit", dsn, []string{"tenants", "list", "--limit", "0"}, cmdutil.ExitUsage, "invalid --limit 0"},
		{"limit too large", dsn, []string{"tenants", "list", "--limit", "5000"}, cmdutil.ExitUsage, "invalid --limit 5000"},
		{"forged cursor", dsn, []string{"tenants", "list", "--cursor", "forged"}, cmdutil.ExitUsage, "invalid cursor"},
		{"no database configured", "", []string{"tenants", "get", "acme"}, cmdutil.ExitFailure, "STREAMING_HUB_POSTGRES_DSN"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := hubctl(t, c.dsn, c.args...)
			if code != c.wantCode || !strings.Contains(stderr, c.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, stderr, c.wantCode, c.wantErr)
			}
			if stdout != "" {
				t.Errorf("failed command printed %q on stdout", stdout)
			}
		})
	}
}

func TestTenantTableAndYAML(t *testing.T) {
	dsn := pgtest.DSN(t)
	if code, _, stderr := hubctl(t, dsn, "tenants", "create", "acme"); code != 0 {
		t.Fatalf("create: exit %d: %s", code, stderr)
	}

	code, stdout, _ := hubctl(t, dsn, "tenants", "get", "acme", "-o", "table")
	row := regexp.MustCompile(`(?m)^ID\s+STATUS\s+CREATED\s*\nacme\s+active\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s*$`)
	if code != 0 || !row.MatchString(stdout) {
		t.Errorf("table: exit %d:\n%s", code, stdout)
	}

	code, stdout, _ = hubctl(t, dsn, "tenants", "get", "acme", "-o", "yaml")
	if code != 0 || !strings.HasPrefix(stdout, "id: acme\nstatus: active\ncreated_at: ") {
		t.Errorf("yaml: exit %d:\n%s", code, stdout)
	}
}

func TestTenantListPages(t *testing.T) {
	dsn := pgtest.DSN(t)
	for _, id := range []string{"charlie", "alpha", "bravo"} {
		if code, _, stderr := hubctl(t, dsn, "tenants", "create", id); code != 0 {
			t.Fatalf("create %s: exit %d: %s", id, code, stderr)
		}
	}

	type page struct {
		Items      []tenantJSON `json:"items"`
		NextCursor *string      `json:"next_cursor"`
	}
	code, stdout, stderr := hubctl(t, dsn, "tenants", "list", "--limit", "2", "-o", "json")
	first := decode[page](t, stdout)
	if code != 0 || len(first.Items) != 2 || first.Items[0].ID != "alpha" || first.Items[1].ID != "bravo" || first.NextCursor == nil {
		t.Fatalf("first page: exit %d %s: %+v", code, stderr, first)
	}
	code, stdout, _ = hubctl(t, dsn, "tenants", "list", "--limit", "2", "--cursor", *first.NextCursor, "-o", "json")
	second := decode[page](t, stdout)
	if code != 0 || len(second.Items) != 1 || second.Items[0].ID != "charlie" || second.NextCursor != nil {
		t.Errorf("second page: exit %d: %+v", code, second)
	}

	// The table tells on stderr how to get the next page.
	code, stdout, stderr = hubctl(t, dsn, "tenants", "list", "--limit", "2", "-o", "table")
	if code != 0 || strings.Count(stdout, "\n") != 3 {
		t.Errorf("table page: exit %d:\n%s", code, stdout)
	}
	if want := "hubctl tenants list --limit 2 --cursor " + *first.NextCursor; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}

	// An empty roster is an empty list, not null.
	code, stdout, _ = hubctl(t, pgtest.DSN(t), "tenants", "list", "-o", "json")
	if code != 0 || strings.Join(strings.Fields(stdout), "") != `{"items":[],"next_cursor":null}` {
		t.Errorf("empty list: exit %d: %s", code, stdout)
	}
}
