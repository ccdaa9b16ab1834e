// Package tenants implements `hubctl tenants`: the roster ingest admits
// events for (docs/concepts.md, Tenants), and the tenants' API keys, through the API or
// directly on the database (hubaccess).
package tenants

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/iostreams"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/cli/tenants/keys"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// NewCmd returns `hubctl tenants`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tenants",
		Short: "Manage the tenants whose events the hub accepts",
		Long: `Manage the tenant roster. Ingest accepts an event only when its tenant is in
the roster and active; events of unknown or inactive tenants are discarded.
Every hubctl serve instance sees a change at once (the database notifies
it; STREAMING_HUB_ROSTER_REFRESH is the fallback), and an event produced
after a tenant was created or activated here is admitted.

These commands go through the API with --server and the admin token, or
directly on the database (--database-url or STREAMING_HUB_POSTGRES_DSN).

A tenant id matches ` + hubapi.TenantIDRule + `.`,
		Example: `  hubctl tenants create acme
  hubctl tenants deactivate acme
  hubctl tenants purge acme --yes
  hubctl tenants list -o json
  HUBCTL_SERVER=https://hub.example.com HUBCTL_TOKEN=$ADMIN_TOKEN hubctl tenants get acme`,
	}
	cmd.AddCommand(
		NewCmdCreate(f, nil),
		NewCmdList(f, nil),
		NewCmdGet(f, nil),
		NewCmdActivate(f, nil),
		NewCmdDeactivate(f, nil),
		NewCmdPurge(f, nil),
		keys.NewCmd(f),
	)
	return cmd
}

// checkOne checks what every one-tenant verb takes: the format, then the
// id. The id is checked before the hub is reached: a malformed id is
// rejected the same way whether a database, a server or neither is
// configured.
func checkOne(f *cmdutil.Factory, format, id string) (output.Format, error) {
	fm, err := cmdutil.ResolveFormat(f, format)
	if err != nil {
		return "", err
	}
	return fm, hubapi.CheckTenantID(id)
}

// runOne runs a use case that answers with one tenant and prints it.
func runOne(ctx context.Context, f *cmdutil.Factory, fm output.Format, do func(hubapi.ControlPlane) (hubapi.Tenant, error)) error {
	tenant, err := hubaccess.Call(ctx, f, do)
	if err != nil {
		return err
	}
	return printTenant(f.IOStreams, fm, tenant)
}

func printTenant(ios *iostreams.IOStreams, fm output.Format, tenant hubapi.Tenant) error {
	return output.New(ios, fm).Print(tenant, func(t *output.TableWriter) {
		tenantHeader(t)
		addRow(t, ios, tenant)
	})
}

func tenantHeader(t *output.TableWriter) { t.Header("id", "status", "created") }

func addRow(t *output.TableWriter, ios *iostreams.IOStreams, tenant hubapi.Tenant) {
	t.Row(tenant.ID, output.Style(ios, tenant.Status), tenant.CreatedAt.Format(time.RFC3339))
}
