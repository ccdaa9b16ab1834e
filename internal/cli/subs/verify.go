package subs

import (
	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// NewCmdVerify returns `hubctl subs verify`; a non-nil runF replaces the
// real run.
func NewCmdVerify(f *cmdutil.Factory, runF func(*OneOptions) error) *cobra.Command {
	return newOneCmd(f, runF, oneSpec{
		verb: "verify", short: "Probe the destination again",
		long: `Verify a subscription's destination again (a signed probe for webhooks).
Success makes it active and enabled, recovering one the hub disabled. A
failed probe exits 1 with the probe's error and leaves the subscription
marked failed.`,
		do: hubapi.ControlPlane.VerifySubscription,
	})
}
