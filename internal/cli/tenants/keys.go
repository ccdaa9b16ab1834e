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

// Key states as the table shows them.
const (
	keyActive  = "active"
	keyRevoked = "revoked"
)

func newKeysCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Issue, list and revoke a tenant's API keys",
		Long: `Manage the API keys a tenant calls the tenant API (/v1) with. A key is shown
once, when it is created; the hub keeps only its hash, so a lost key is
replaced, never recovered. Revoking a key stops it at once.`,
		Example: `  hubctl tenants keys create acme --name ci
  hubctl tenants keys list acme
  hubctl tenants keys revoke acme 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b`,
	}
	cmd.AddCommand(newKeyCreateCmd(f), newKeyListCmd(f), newKeyRevokeCmd(f))
	return cmd
}

func newKeyCreateCmd(f *cmdutil.Factory) *cobra.Command {
	var format, name string
	cmd := &cobra.Command{
		Use:   "create TENANT --name NAME",
		Short: "Issue an API key for a tenant and print it once",
		Long: `Issue an API key for a tenant. The key is printed once, here: store it now,
it cannot be shown again. The name says what the key is for (a service, an
environment) so that it can be found and revoked later.`,
		Example: `  hubctl tenants keys create acme --name billing-service
  HUBCTL_TOKEN=$(hubctl tenants keys create acme --name ci -o json | jq -r .key)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("name") {
				return cmdutil.UsageErrorf("--name is required: say what the key is for, e.g. --name billing-service")
			}
			if err := service.CheckTenantID(args[0]); err != nil {
				return err
			}
			key, err := hubaccess.Call(cmd.Context(), f, func(h hubaccess.Hub) (hubapi.CreatedAPIKey, error) {
				return h.CreateAPIKey(cmd.Context(), args[0], name)
			})
			if err != nil {
				return err
			}
			err = output.New(f.IOStreams, fm).Print(key, func(t *output.TableWriter) {
				t.Header("id", "name", "key", "created")
				t.Row(key.ID, key.Name, key.Key, key.CreatedAt.Format(time.RFC3339))
			})
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(f.IOStreams.ErrOut, "Store this key now: it will not be shown again.")
			return err
		},
	}
	cmdutil.AddOutputFlag(cmd, &format)
	cmd.Flags().StringVar(&name, "name", "", "what the key is for (required)")
	return cmd
}

func newKeyListCmd(f *cmdutil.Factory) *cobra.Command {
	var format, cursor string
	var limit int
	cmd := &cobra.Command{
		Use:   "list TENANT",
		Short: "List a tenant's API keys, revoked ones included",
		Long: fmt.Sprintf(`List a tenant's API keys, oldest first, --limit at a time (at most %d):
their ids, names, the first characters of each key (to recognise one), when
each was last used and whether it is revoked. Keys themselves are never shown
again.`, service.MaxPageLimit),
		Example: `  hubctl tenants keys list acme
  hubctl tenants keys list acme -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			if err := cmdutil.CheckLimit(limit); err != nil {
				return err
			}
			if err := service.CheckTenantID(args[0]); err != nil {
				return err
			}
			page, err := hubaccess.Call(cmd.Context(), f, func(h hubaccess.Hub) (hubapi.Page[hubapi.APIKey], error) {
				return h.ListAPIKeys(cmd.Context(), args[0], service.ListParams{Limit: limit, Cursor: cursor})
			})
			if err != nil {
				return err
			}
			return output.PrintPage(output.New(f.IOStreams, fm), page, keyHeader,
				func(t *output.TableWriter, key hubapi.APIKey) { keyRow(t, f, key) },
				"keys", "hubctl tenants keys list "+args[0]+cmdutil.RepeatLimit(cmd, limit))
		},
	}
	cmdutil.AddOutputFlag(cmd, &format)
	cmdutil.AddPageFlags(cmd, &limit, &cursor, "keys")
	return cmd
}

func newKeyRevokeCmd(f *cmdutil.Factory) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "revoke TENANT KEY_ID",
		Short: "Stop an API key from working, at once and for good",
		Long: `Revoke an API key: every request with it is refused from now on (401).
Revoking a revoked key changes nothing and keeps the first revocation time.
Exits 3 when the tenant has no key with that id.`,
		Example: `  hubctl tenants keys revoke acme 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			if err := service.CheckTenantID(args[0]); err != nil {
				return err
			}
			key, err := hubaccess.Call(cmd.Context(), f, func(h hubaccess.Hub) (hubapi.APIKey, error) {
				return h.RevokeAPIKey(cmd.Context(), args[0], args[1])
			})
			if err != nil {
				return err
			}
			return output.New(f.IOStreams, fm).Print(key, func(t *output.TableWriter) {
				keyHeader(t)
				keyRow(t, f, key)
			})
		},
	}
	cmdutil.AddOutputFlag(cmd, &format)
	return cmd
}

func keyHeader(t *output.TableWriter) {
	t.Header("id", "name", "prefix", "state", "created", "last used")
}

func keyRow(t *output.TableWriter, f *cmdutil.Factory, key hubapi.APIKey) {
	state := keyActive
	if key.RevokedAt != nil {
		state = keyRevoked
	}
	t.Row(key.ID, key.Name, key.Prefix, output.Style(f.IOStreams, state), key.CreatedAt.Format(time.RFC3339), formatOptionalTime(key.LastUsedAt))
}

// formatOptionalTime shows "-" for a time that has not happened.
func formatOptionalTime(at *time.Time) string {
	if at == nil {
		return "-"
	}
	return at.Format(time.RFC3339)
}
