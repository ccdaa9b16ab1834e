package subs

import (
	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// NewCmdEnable returns `hubctl subs enable`; a non-nil runF replaces the
// real run.
func NewCmdEnable(f *cmdutil.Factory, runF func(*OneOptions) error) *cobra.Command {
	return newOneCmd(f, runF, oneSpec{
		verb: "enable", short: "Turn delivery back on",
		long: `Enable a subscription: its events are delivered again. It clears the reason
the hub gave for disabling it, but not a failed verification: a destination
that still fails is disabled again; verify recovers it for good.`,
		do: hubapi.ControlPlane.EnableSubscription,
	})
}
