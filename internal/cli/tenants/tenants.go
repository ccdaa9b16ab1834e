// Package tenants implements `hubctl tenants`: the roster ingest admits
// events for (SPEC §1.4), and the tenants' API keys, through the API or
// directly on the database (hubaccess).
package tenants

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// NewCmd returns `hubctl tenants`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tenants",
		Short: "Manage the tenants whose events the hub accepts",
		Long: `Manage the tenant roster. Ingest accepts an event only when its tenant is in
the roster and active; events of unknown or inactive tenants are discarded.
Every hubctl serve instance sees a change within STREAMING_HUB_ROSTER_REFRESH.

These commands go through the API with --server and the admin token, or
directly on the database (--database-url or STREAMING_HUB_POSTGRES_DSN).

A tenant id matches ` + service.TenantIDRule + `.`,
		Example: `  hubctl tenants create acme
  hubctl tenants deactivate acme
  hubctl tenants list -o json
  HUBCTL_SERVER=https://hub.example.com HUBCTL_TOKEN=$ADMIN_TOKEN hubctl tenants get acme`,
	}
	cmd.AddCommand(
		newCreateCmd(f),
		newListCmd(f),
		newGetCmd(f),
		newStatusCmd(f, "activate", service.TenantActive,
			"Let a tenant's events in again",
			"Make the tenant active: ingest accepts its events again from the next roster refresh."),
		newStatusCmd(f, "deactivate", service.TenantInactive,
			"Stop accepting a tenant's events",
			`Make the tenant inactive: from the next roster refresh ingest discards its
events (reason inactive_tenant). Its subscriptions and stored events stay.`),
		newKeysCmd(f),
	)
	return cmd
}

func newCreateCmd(f *cmdutil.Factory) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "create ID",
		Short: "Add an active tenant",
		Long: `Add a tenant to the roster, active. Creating a tenant that already exists
fails (exit 1) and leaves it as it is.`,
		Example: `  hubctl tenants create acme
  hubctl tenants create acme -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runOne(cmd, f, format, args[0], func(h hubaccess.Hub) (hubapi.Tenant, error) {
				return h.CreateTenant(cmd.Context(), args[0])
			})
		},
	}
	cmdutil.AddOutputFlag(cmd, &format)
	return cmd
}

func newGetCmd(f *cmdutil.Factory) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "get ID",
		Short: "Show one tenant",
		Long:  `Show one tenant. Exits 3 when there is no tenant with that id.`,
		Example: `  hubctl tenants get acme
  hubctl tenants get acme -o yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runOne(cmd, f, format, args[0], func(h hubaccess.Hub) (hubapi.Tenant, error) {
				return h.GetTenant(cmd.Context(), args[0])
			})
		},
	}
	cmdutil.AddOutputFlag(cmd, &format)
	return cmd
}

func newStatusCmd(f *cmdutil.Factory, verb, status, short, long string) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:     verb + " ID",
		Short:   short,
		Long:    long + "\n\nExits 3 when there is no tenant with that id. Repeating it changes nothing.",
		Example: "  hubctl tenants " + verb + " acme",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runOne(cmd, f, format, args[0], func(h hubaccess.Hub) (hubapi.Tenant, error) {
				return h.SetTenantStatus(cmd.Context(), args[0], status)
			})
		},
	}
	cmdutil.AddOutputFlag(cmd, &format)
	return cmd
}

func newListCmd(f *cmdutil.Factory) *cobra.Command {
	var format, cursor string
	var limit int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List tenants in id order",
		Long: fmt.Sprintf(`List tenants in id order, --limit at a time (at most %d). When more
follow, -o json and -o yaml carry next_cursor and the table prints the
command for the next page on stderr.`, service.MaxPageLimit),
		Example: `  hubctl tenants list
  hubctl tenants list -o json --limit 500`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			if err := cmdutil.CheckLimit(limit); err != nil {
				return err
			}
			page, err := hubaccess.Call(cmd.Context(), f, func(h hubaccess.Hub) (hubapi.Page[hubapi.Tenant], error) {
				return h.ListTenants(cmd.Context(), service.ListParams{Limit: limit, Cursor: cursor})
			})
			if err != nil {
				return err
			}
			return output.PrintPage(output.New(f.IOStreams, fm), page, tenantHeader,
				func(t *output.TableWriter, tenant hubapi.Tenant) { addRow(t, f, tenant) },
				"tenants", "hubctl tenants list"+cmdutil.RepeatLimit(cmd, limit))
		},
	}
	cmdutil.AddOutputFlag(cmd, &format)
	cmdutil.AddPageFlags(cmd, &limit, &cursor, "tenants")
	return cmd
}

// runOne runs a use case that answers with one tenant and prints it. The id
// is checked before the hub is reached: a malformed id is rejected the same
// way whether a database, a server or neither is configured.
func runOne(cmd *cobra.Command, f *cmdutil.Factory, format, id string, do func(hubaccess.Hub) (hubapi.Tenant, error)) error {
	fm, err := cmdutil.ResolveFormat(f, format)
	if err != nil {
		return err
	}
	if err := service.CheckTenantID(id); err != nil {
		return err
	}
	tenant, err := hubaccess.Call(cmd.Context(), f, func(h hubaccess.Hub) (hubapi.Tenant, error) {
		return do(h)
	})
	if err != nil {
		return err
	}
	return output.New(f.IOStreams, fm).Print(tenant, func(t *output.TableWriter) {
		tenantHeader(t)
		addRow(t, f, tenant)
	})
}

func tenantHeader(t *output.TableWriter) { t.Header("id", "status", "created") }

func addRow(t *output.TableWriter, f *cmdutil.Factory, tenant hubapi.Tenant) {
	t.Row(tenant.ID, output.Style(f.IOStreams, tenant.Status), tenant.CreatedAt.Format(time.RFC3339))
}
