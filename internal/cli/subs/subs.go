// Package subs implements `hubctl subs`: a tenant's subscriptions (docs/concepts.md, Subscriptions),
// through the API or directly on the database (hubaccess).
package subs

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// NewCmd returns `hubctl subs`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "subs",
		Aliases: []string{"subscriptions"},
		Short:   "Manage a tenant's subscriptions",
		Long: `Manage subscriptions: which events of a tenant go to which destination.

Through the API (--server) the commands act on the tenant of a tenant API
key, or, with the admin token, on the tenant named by --tenant (sent as
X-Tenant-Id). Directly on the database (--database-url) --tenant is always
required. HUBCTL_TENANT stands in for --tenant.

Every command on one subscription takes its id or, when no other
subscription of the tenant has it, its name; a name several share is
refused (exit 2) with their ids.

Creating a subscription, and changing its sink, verifies the destination at
once (a signed probe for webhooks); verify does it again on demand.`,
		Example: `  export HUBCTL_SERVER=https://hub.example.com HUBCTL_TOKEN=$ACME_KEY
  hubctl subs create --name orders --type webhook --url https://acme.example/hooks --event-types 'transaction.*'
  hubctl subs list
  hubctl subs disable 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b
  hubctl subs get orders
  hubctl subs list --tenant acme --database-url postgres://hub@db/hub`,
	}
	cmd.PersistentFlags().String(hubaccess.FlagTenant, "", "tenant to act on ("+hubaccess.EnvTenant+"); required on the database and with the admin token")
	cmd.AddCommand(
		NewCmdCreate(f, nil),
		NewCmdList(f, nil),
		NewCmdGet(f, nil),
		NewCmdUpdate(f, nil),
		NewCmdDelete(f, nil),
		NewCmdEnable(f, nil),
		NewCmdDisable(f, nil),
		NewCmdVerify(f, nil),
		NewCmdRotateSecret(f, nil),
		NewCmdRecover(f, nil),
		NewCmdDeliveries(f, nil),
		NewCmdTestFilter(f, nil),
	)
	return cmd
}

// readFile decodes the --from-file body, "-" meaning standard input.
func readFile(f *cmdutil.Factory, path string, dst any) error {
	if path == "-" {
		return decodeBody(f.IOStreams.In, "standard input", dst)
	}
	file, err := os.Open(path)
	if err != nil {
		return cmdutil.UsageErrorf("--%s: %v", flagFromFile, err)
	}
	defer file.Close()
	return decodeBody(file, path, dst)
}

// printSecret shows a secret in the table form (the encoded forms carry it
// as a field) and warns, on stderr so that scripts' output stays clean,
// that it is shown only this once.
func printSecret(f *cmdutil.Factory, fm output.Format, secret string) error {
	if fm == output.Table {
		if _, err := fmt.Fprintf(f.IOStreams.Out, "\nSigning secret: %s\n", secret); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(f.IOStreams.ErrOut, "Store the signing secret now: it will not be shown again.")
	return err
}

// completionTimeout bounds the lookup behind a Tab press.
const completionTimeout = 5 * time.Second

// completeIDs completes the first argument with the ids of the tenant's
// subscriptions, their names as descriptions. Completion is best effort: a
// hub that cannot be reached completes nothing rather than print errors
// into the user's shell.
func completeIDs(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		// Completion runs outside the root's pre-run for this command, so
		// the command's own flags are recorded here.
		configFile, _ := cmd.Flags().GetString("config")
		f.UseFlags(cmd.Flags(), configFile)
		ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
		defer cancel()
		var completions []cobra.Completion
		_ = hubaccess.RunForTenant(ctx, f, func(h hubapi.ControlPlane, tenant string) error {
			page, err := h.ListSubscriptions(ctx, tenant, hubapi.ListParams{Limit: hubapi.MaxPageLimit})
			for _, sub := range page.Items {
				if strings.HasPrefix(sub.ID, toComplete) {
					completions = append(completions, cobra.CompletionWithDesc(sub.ID, sub.Name))
				}
			}
			return err
		})
		return completions, cobra.ShellCompDirectiveNoFileComp
	}
}
