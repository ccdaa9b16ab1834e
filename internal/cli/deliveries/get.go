package deliveries

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// GetOptions is `hubctl deliveries get` parsed.
type GetOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	ID      string
}

// NewCmdGet returns `hubctl deliveries get`; a non-nil runF replaces the
// real run.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "get ID",
		Short: "Show a delivery and every attempt it made",
		Long: `Show one delivery: its state, the event it carries and, oldest first, each
attempt made to deliver it, with the X-Lerian-Delivery-Id the destination
received, when it started, how long it took, the status the destination
answered and the error. -o json and -o yaml add the start of each answer's
body (text, or base64 with response_encoding).

ID is the delivery's id or the id of any of its attempts: the X-Lerian-Delivery-Id
a receiver logged (hubctl listen prints it) leads to the delivery.

Exits 3 when the tenant has no delivery with that id.`,
		Example: `  hubctl deliveries get 0196a1c3-0a1b-7c2d-8e3f-405162738495
  hubctl deliveries get 0196a1c3-0a1b-7c2d-8e3f-405162738495 --tenant acme -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			return cmdutil.Run(cmd.Context(), &GetOptions{Factory: f, Format: fm, ID: args[0]}, runF, getRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".id")
	return cmd
}

func getRun(ctx context.Context, opts *GetOptions) error {
	detail, err := hubaccess.CallForTenant(ctx, opts.Factory, func(h hubapi.ControlPlane, tenant string) (hubapi.DeliveryDetail, error) {
		return h.GetDelivery(ctx, tenant, opts.ID)
	})
	if err != nil {
		return err
	}
	return printDetail(opts.Factory, opts.Format, detail)
}

// printDetail shows the summary above the attempts in a table; the encoded
// forms are the API's DeliveryDetail as it is.
func printDetail(f *cmdutil.Factory, fm output.Format, detail hubapi.DeliveryDetail) error {
	out := f.IOStreams.Out
	if fm == output.Table {
		if err := writeSummary(out, f, detail.Delivery, len(detail.AttemptHistory)); err != nil {
			return err
		}
		if len(detail.AttemptHistory) == 0 {
			_, err := fmt.Fprintln(out, "\nNo attempts yet.")
			return err
		}
		if _, err := fmt.Fprintln(out); err != nil {
			return err
		}
	}
	return output.New(f.IOStreams, fm).Print(detail, func(t *output.TableWriter) {
		attemptsTable(t, f, detail.AttemptHistory)
	})
}
