package subs

import (
	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// NewCmdDisable returns `hubctl subs disable`; a non-nil runF replaces the
// real run.
func NewCmdDisable(f *cmdutil.Factory, runF func(*OneOptions) error) *cobra.Command {
	return newOneCmd(f, runF, oneSpec{
		verb: "disable", short: "Stop delivery",
		long: `Disable a subscription: no new deliveries start; its events are no longer
matched. Deliveries in flight finish their attempt.`,
		do: hubapi.ControlPlane.DisableSubscription,
	})
}
