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
	addOutputFlag(cmd, &format)
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
	addOutputFlag(cmd, &format)
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
	addOutputFlag(cmd, &format)
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
			fm, err := output.Resolve(format, f.IOStreams)
			if err != nil {
				return cmdutil.WithCode(cmdutil.ExitUsage, err)
			}
			// Checked here, not only by the service: it reads 0 as "the
			// default", but on the command line the default is already
			// filled in, so 0 is a mistake; and the message names the flag.
			if limit < 1 || limit > service.MaxPageLimit {
				return cmdutil.UsageErrorf("invalid --limit %d: must be between 1 and %d", limit, service.MaxPageLimit)
			}
			var page hubapi.Page[hubapi.Tenant]
			err = hubaccess.Run(cmd.Context(), f, func(h hubaccess.Hub) (err error) {
				page, err = h.ListTenants(cmd.Context(), service.ListParams{Limit: limit, Cursor: cursor})
				return err
			})
			if err != nil {
				return err
			}
			err = output.New(f.IOStreams, fm).Print(page, func(t *output.TableWriter) {
				t.Header("id", "status", "created")
				for _, tenant := range page.Items {
					addRow(t, f, tenant)
				}
			})
			if err == nil && fm == output.Table && page.NextCursor != nil {
				_, err = fmt.Fprintf(f.IOStreams.ErrOut, "More tenants follow: hubctl tenants list%s --cursor %s\n", limitFlag(cmd, limit), *page.NextCursor)
			}
			return err
		},
	}
	addOutputFlag(cmd, &format)
	cmd.Flags().IntVar(&limit, "limit", service.DefaultPageLimit, fmt.Sprintf("most tenants to list (1-%d)", service.MaxPageLimit))
	cmd.Flags().StringVar(&cursor, "cursor", "", "continue a listing from the next_cursor of its previous page")
	return cmd
}

// limitFlag repeats --limit for the next-page hint when the user chose one.
func limitFlag(cmd *cobra.Command, limit int) string {
	if !cmd.Flags().Changed("limit") {
		return ""
	}
	return fmt.Sprintf(" --limit %d", limit)
}

// runOne runs a use case that answers with one tenant and prints it. The id
// is checked before the hub is reached: a malformed id is rejected the same
// way whether a database, a server or neither is configured.
func runOne(cmd *cobra.Command, f *cmdutil.Factory, format, id string, do func(hubaccess.Hub) (hubapi.Tenant, error)) error {
	fm, err := output.Resolve(format, f.IOStreams)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	if err := service.CheckTenantID(id); err != nil {
		return err
	}
	var tenant hubapi.Tenant
	err = hubaccess.Run(cmd.Context(), f, func(h hubaccess.Hub) (err error) {
		tenant, err = do(h)
		return err
	})
	if err != nil {
		return err
	}
	return output.New(f.IOStreams, fm).Print(tenant, func(t *output.TableWriter) {
		t.Header("id", "status", "created")
		addRow(t, f, tenant)
	})
}

func addRow(t *output.TableWriter, f *cmdutil.Factory, tenant hubapi.Tenant) {
	t.Row(tenant.ID, output.Style(f.IOStreams, tenant.Status), tenant.CreatedAt.Format(time.RFC3339))
}

func addOutputFlag(cmd *cobra.Command, format *string) {
	cmd.Flags().StringVarP(format, "output", "o", "", "output format: table, json or yaml")
}
