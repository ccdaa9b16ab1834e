package events

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/deliveries"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// GetOptions is `hubctl events get` parsed.
type GetOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	ID      string
}

// NewCmdGet returns `hubctl events get`; a non-nil runF replaces the real
// run.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "get CE_ID",
		Short: "Show a stored event and every delivery of it",
		Long: `Show one event of the tenant's inbox by its CloudEvents id (the
X-Lerian-Event-Id a receiver saw): its attributes, where it was read in
Kafka, its size and payload, and, for every subscription that matched it, the
delivery with each attempt (push) or whether the cursor has passed it (pull).

Exits 3 when the tenant's inbox has no event with that id.`,
		Example: `  hubctl events get 0190b6a2-7c1e-7d3a-9f00-00000000002a
  hubctl events get 0190b6a2-7c1e-7d3a-9f00-00000000002a -o json --jq '.deliveries[].delivery.state'`,
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
	cmd.Flags().String(hubaccess.FlagTenant, "", "tenant to act on ("+hubaccess.EnvTenant+"); required on the database and with the admin token")
	return cmd
}

func getRun(ctx context.Context, opts *GetOptions) error {
	detail, err := hubaccess.CallForTenant(ctx, opts.Factory, func(h hubapi.ControlPlane, tenant string) (hubapi.EventDetail, error) {
		return h.GetEvent(ctx, tenant, opts.ID)
	})
	if err != nil {
		return err
	}
	if opts.Format != output.Table {
		return output.New(opts.Factory.IOStreams, opts.Format).Print(detail, nil)
	}
	return printEventTable(opts.Factory, detail)
}

// printEventTable shows the event field by field, then each delivery with
// its attempts.
func printEventTable(f *cmdutil.Factory, e hubapi.EventDetail) error {
	out := f.IOStreams.Out
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, field := range [][2]string{
		{"Event", e.ID},
		{"Type", output.SafeText(e.Type, 0)},
		{"CE type", output.SafeText(e.CEType, 0)},
		{"Source", output.SafeText(e.Source, 0)},
		{"Subject", orDash(output.SafeText(e.Subject, 0))},
		{"Schema version", output.SafeText(e.SchemaVersion, 0)},
		{"Time", e.Time.Format(time.RFC3339)},
		{"Received", e.ReceivedAt.Format(time.RFC3339)},
		{"Kafka", fmt.Sprintf("%s [%d] @%d", output.SafeText(e.Topic, 0), e.Partition, e.Offset)},
		{"Size", strconv.Itoa(e.SizeBytes) + " bytes"},
		{"Payload", payloadPreview(e.InboxEvent)},
	} {
		fmt.Fprintf(tw, "%s:\t%s\n", field[0], field[1])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(e.Deliveries) == 0 {
		_, err := fmt.Fprintln(out, "\nNo subscription matched it.")
		return err
	}
	for _, d := range e.Deliveries {
		fmt.Fprintf(out, "\n%s (%s, %s)", output.SafeText(d.SubscriptionName, 0), d.SinkType, d.SubscriptionID)
		switch {
		case d.Pulled != nil && *d.Pulled:
			fmt.Fprintln(out, ": pulled")
		case d.Pulled != nil:
			fmt.Fprintln(out, ": waiting to be pulled")
		case d.Delivery != nil:
			fmt.Fprintf(out, ": delivery %s %s, %s\n", d.Delivery.ID, output.Style(f.IOStreams, d.Delivery.State), output.Count(d.Delivery.Attempts, "attempt", "attempts"))
			if err := deliveries.PrintAttempts(f, d.Delivery.AttemptHistory); err != nil {
				return err
			}
		default:
			fmt.Fprintln(out)
		}
	}
	return nil
}

// payloadPreviewRunes keeps the table to one screen; -o json has it whole.
const payloadPreviewRunes = 200

func payloadPreview(e hubapi.InboxEvent) string {
	if e.PayloadEncoding != "" {
		return "(" + e.PayloadEncoding + ", see -o json)"
	}
	return orDash(output.SafeText(string(e.Payload), payloadPreviewRunes))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
