package subs

import (
	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// NewCmdGet returns `hubctl subs get`; a non-nil runF replaces the real run.
func NewCmdGet(f *cmdutil.Factory, runF func(*OneOptions) error) *cobra.Command {
	return newOneCmd(f, runF, oneSpec{
		verb: "get", short: "Show one subscription",
		long: `Show one subscription: its sink, what it matches, its retry settings, and its
verification and failure state. Credentials, and a webhook's signing secret,
show as "****".`,
		do: hubapi.ControlPlane.GetSubscription,
	})
}
