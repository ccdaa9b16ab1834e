// Package dlq implements `hubctl dlq list|replay`: a tenant's dead letters
// (docs/concepts.md, Dead letters and poison), through the API or directly on the database (hubaccess).
package dlq

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// NewCmd returns `hubctl dlq`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "List and replay dead letters",
		Long: `List and replay dead letters: deliveries that stopped trying, because their
retries ran out (exhausted), their worker kept dying mid-attempt (poison) or
their subscription was switched off with them queued (subscription_disabled),
or their subscription's content filter failed on the event (filter_error:
fix the filter, then replay them).

A replay sends them back to pending, due at once, with a fresh attempt
budget; their attempt history stays. Dead letters of a deleted subscription
are never listed nor replayed.

Through the API (--server) the commands act on the tenant of a tenant API
key, or, with the admin token, on the tenant named by --tenant. Directly on
the database (--database-url) --tenant is always required. HUBCTL_TENANT
stands in for --tenant.`,
		Example: `  hubctl dlq list --reason exhausted --since 2026-12-01T00:00:00Z
  hubctl dlq replay --subscription 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --dry-run
  hubctl dlq replay --subscription 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --yes`,
	}
	cmd.PersistentFlags().String(hubaccess.FlagTenant, "", "tenant to act on ("+hubaccess.EnvTenant+"); required on the database and with the admin token")
	cmd.AddCommand(NewCmdList(f, nil), NewCmdReplay(f, nil))
	return cmd
}

// flagSubscription selects one subscription's dead letters, by id or name.
const flagSubscription = "subscription"

// filterFlags are the selection both subcommands share.
type filterFlags struct {
	subscription, reason, since, until string
}

func (ff *filterFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&ff.subscription, flagSubscription, "", "only this subscription's dead letters (its id or name)")
	fs.StringVar(&ff.reason, "reason", "", "only dead letters of this reason: "+strings.Join(hubapi.DeadReasons, ", "))
	fs.StringVar(&ff.since, "since", "", "only dead letters that died at or after this time (RFC 3339)")
	fs.StringVar(&ff.until, "until", "", "only dead letters that died before this time (RFC 3339)")
}

func (ff filterFlags) filter() hubapi.DeadLetterFilter {
	return hubapi.DeadLetterFilter{SubscriptionID: ff.subscription, Reason: ff.reason, Since: ff.since, Until: ff.until}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func optionalInt(v *int) string {
	if v == nil {
		return "-"
	}
	return strconv.Itoa(*v)
}
