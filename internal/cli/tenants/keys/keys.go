// Package keys implements `hubctl tenants keys`: the API keys a tenant
// calls the tenant API with.
package keys

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/iostreams"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Key states as the table shows them.
const (
	keyActive  = "active"
	keyRevoked = "revoked"
)

// NewCmd returns `hubctl tenants keys`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
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
	cmd.AddCommand(NewCmdCreate(f, nil), NewCmdList(f, nil), NewCmdRevoke(f, nil))
	return cmd
}

func keyHeader(t *output.TableWriter) {
	t.Header("id", "name", "prefix", "state", "created", "last used")
}

func keyRow(t *output.TableWriter, ios *iostreams.IOStreams, key hubapi.APIKey) {
	state := keyActive
	if key.RevokedAt != nil {
		state = keyRevoked
	}
	t.Row(key.ID, key.Name, key.Prefix, output.Style(ios, state), key.CreatedAt.Format(time.RFC3339), output.OptionalTime(key.LastUsedAt))
}
