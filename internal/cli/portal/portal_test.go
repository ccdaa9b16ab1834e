package portal_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/cli/portal"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want portal.Options
	}{
		{nil, nil, portal.Options{Format: output.JSON}},
		{[]string{"--tenant", "acme", "--ttl", "24h", "--read-only", "--open"}, nil,
			portal.Options{Format: output.JSON, Tenant: "acme", TTL: "24h", ReadOnly: true, Open: true}},
		{nil, map[string]string{"HUBCTL_TENANT": "globex"}, portal.Options{Format: output.JSON, Tenant: "globex"}},
	} {
		f, _, _, _ := cmdtest.Factory(tc.env)
		var got *portal.Options
		if err := cmdtest.Exec(t, f, portal.NewCmd(f, func(o *portal.Options) error { got = o; return nil }), tc.args...); err != nil || got == nil {
			t.Fatalf("%q: err %v", tc.args, err)
		}
		got.Browse = nil
		tc.want.Factory = f
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("%q: %+v, want %+v", tc.args, *got, tc.want)
		}
	}
	for _, args := range [][]string{{"--ttl", "169h"}, {"--ttl", "30"}, {"--tenant", "no spaces"}, {"extra"}} {
		f, _, _, _ := cmdtest.Factory(nil)
		err := cmdtest.Exec(t, f, portal.NewCmd(f, func(*portal.Options) error { return errors.New("ran") }), args...)
		if err == nil || err.Error() == "ran" {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

// On the database, as the operator: a tenant's link with --tenant, the
// console's without, and the link alone on stdout in a table.
func TestLinksOnTheDatabase(t *testing.T) {
	env := clitest.Database(pgtest.DSN(t))
	env["STREAMING_HUB_PUBLIC_URL"] = "https://hub.example.com"
	if r := clitest.Run(t, env, "tenants", "create", "acme"); r.Code != 0 {
		t.Fatalf("tenants create: exit %d\n%s", r.Code, r.Stderr)
	}
	r := clitest.Run(t, env, "portal", "--tenant", "acme", "--ttl", "2h", "--read-only", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("portal: exit %d\n%s", r.Code, r.Stderr)
	}
	var link hubapi.PortalLink
	if err := json.Unmarshal([]byte(r.Stdout), &link); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(link.URL, "https://hub.example.com/portal/sign-in?token=hpl_") || !link.ReadOnly {
		t.Errorf("link %+v", link)
	}

	r = clitest.Run(t, env, "portal", "-o", "table")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "https://hub.example.com/portal/sign-in?token=hpl_") ||
		strings.Count(r.Stdout, "\n") != 1 || !strings.Contains(r.Stderr, "operator console") {
		t.Errorf("the console link: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}

	if r := clitest.Run(t, env, "portal", "--tenant", "nobody"); r.Code != 3 {
		t.Errorf("a missing tenant's link: exit %d, want 3 (not found)\n%s", r.Code, r.Stderr)
	}
}
