package tenants_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/cli/tenants"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func testFactory() *cmdutil.Factory {
	f, _, _, _ := cmdtest.Factory(nil)
	return f
}

func TestListParsesItsFlagsWithoutAHub(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    tenants.ListOptions
		wantErr string
	}{
		// Not a terminal: the default is JSON.
		{args: nil, want: tenants.ListOptions{Format: output.JSON, Page: hubapi.ListParams{Limit: hubapi.DefaultPageLimit}, Next: "hubctl tenants list"}},
		{args: []string{"-o", "json", "--limit", "5", "--cursor", "c1"}, want: tenants.ListOptions{Format: output.JSON, Page: hubapi.ListParams{Limit: 5, Cursor: "c1"}, Next: "hubctl tenants list --limit 5"}},
		{args: []string{"--limit", "0"}, wantErr: "invalid --limit 0"},
		{args: []string{"-o", "xml"}, wantErr: "xml"},
		{args: []string{"extra"}, wantErr: "unknown command"},
	} {
		var got *tenants.ListOptions
		f := testFactory()
		err := cmdtest.Exec(t, f, tenants.NewCmdList(f, func(o *tenants.ListOptions) error { got = o; return nil }), tc.args...)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || got != nil {
				t.Errorf("%q: err %v, ran %v; want an error with %q and no run", tc.args, err, got != nil, tc.wantErr)
			}
			continue
		}
		if err != nil || got == nil {
			t.Fatalf("%q: err %v, ran %v", tc.args, err, got != nil)
		}
		tc.want.Factory = f
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("%q: options %+v, want %+v", tc.args, *got, tc.want)
		}
	}
}

func TestOneTenantVerbsCheckTheIDBeforeReachingTheHub(t *testing.T) {
	type verb struct {
		name string
		run  func(f *cmdutil.Factory, ran *bool, args ...string) error
	}
	seam := func(ran *bool) { *ran = true }
	verbs := []verb{
		{"create", func(f *cmdutil.Factory, ran *bool, args ...string) error {
			return cmdtest.Exec(t, f, tenants.NewCmdCreate(f, func(*tenants.CreateOptions) error { seam(ran); return nil }), args...)
		}},
		{"get", func(f *cmdutil.Factory, ran *bool, args ...string) error {
			return cmdtest.Exec(t, f, tenants.NewCmdGet(f, func(*tenants.GetOptions) error { seam(ran); return nil }), args...)
		}},
		{"activate", func(f *cmdutil.Factory, ran *bool, args ...string) error {
			return cmdtest.Exec(t, f, tenants.NewCmdActivate(f, func(o *tenants.StatusOptions) error {
				seam(ran)
				if o.Status != hubapi.TenantActive || o.ID != "acme" {
					t.Errorf("activate: options %+v", o)
				}
				return nil
			}), args...)
		}},
		{"deactivate", func(f *cmdutil.Factory, ran *bool, args ...string) error {
			return cmdtest.Exec(t, f, tenants.NewCmdDeactivate(f, func(o *tenants.StatusOptions) error {
				seam(ran)
				if o.Status != hubapi.TenantInactive {
					t.Errorf("deactivate: options %+v", o)
				}
				return nil
			}), args...)
		}},
	}
	for _, v := range verbs {
		var ran bool
		if err := v.run(testFactory(), &ran, "acme"); err != nil || !ran {
			t.Errorf("%s acme: err %v, ran %v", v.name, err, ran)
		}
		ran = false
		err := v.run(testFactory(), &ran, "Not A Tenant!")
		if err == nil || ran || !strings.Contains(err.Error(), "invalid tenant id") || cmdutil.ExitCode(err) != cmdutil.ExitFailure {
			t.Errorf("%s with a bad id: err %v (exit %d), ran %v", v.name, err, cmdutil.ExitCode(err), ran)
		}
		ran = false
		if err := v.run(testFactory(), &ran); err == nil || ran {
			t.Errorf("%s without an id: err %v, ran %v", v.name, err, ran)
		}
	}
}
