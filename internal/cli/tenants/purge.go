package tenants

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// PurgeOptions is `hubctl tenants purge` parsed.
type PurgeOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	ID      string
	Yes     bool
}

// NewCmdPurge returns `hubctl tenants purge`; a non-nil runF replaces the
// real run.
func NewCmdPurge(f *cmdutil.Factory, runF func(*PurgeOptions) error) *cobra.Command {
	var format string
	var yes bool
	cmd := &cobra.Command{
		Use:   "purge ID [--yes]",
		Short: "Remove a tenant and every row the hub stores for it",
		Long: `Remove a tenant for good, with everything the hub stores for it, in one
transaction: its events and their ids, delivery jobs and attempts, pull
entries and cursors, quarantined records whose tenantid header names it,
subscriptions, API keys and the tenant itself. Nothing of another tenant is
touched. It cannot be undone.

On a terminal it asks first; a script must pass --yes. To stop a tenant's
traffic without losing anything, deactivate it instead. Events another
instance's ingest already had in hand may land within the roster refresh
(STREAMING_HUB_ROSTER_REFRESH): deactivate first and wait that long to be
exact. Exits 3 when there is no tenant with that id.`,
		Example: "  hubctl tenants purge acme\n  hubctl tenants purge acme --yes -o json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := checkOne(f, format, args[0])
			if err != nil {
				return err
			}
			return cmdutil.Run(cmd.Context(), &PurgeOptions{Factory: f, Format: fm, ID: args[0], Yes: yes}, runF, purgeRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, "")
	cmd.Flags().BoolVar(&yes, "yes", false, "purge without asking (for scripts)")
	return cmd
}

func purgeRun(ctx context.Context, opts *PurgeOptions) error {
	if !opts.Yes {
		if err := confirmPurge(opts); err != nil {
			return err
		}
	}
	res, err := hubaccess.Call(ctx, opts.Factory, func(h hubapi.ControlPlane) (hubapi.TenantPurgeResult, error) {
		return h.PurgeTenant(ctx, opts.ID)
	})
	if err != nil {
		return err
	}
	return output.New(opts.Factory.IOStreams, opts.Format).Print(res, func(t *output.TableWriter) {
		t.Header("table", "rows removed")
		for _, r := range res.Removed {
			t.Row(r.Table, fmt.Sprint(r.Rows))
		}
	})
}

// confirmPurge asks the person at the terminal, or refuses when nobody can
// answer: a purge is never implied.
func confirmPurge(opts *PurgeOptions) error {
	ios := opts.Factory.IOStreams
	if !ios.IsStdinTTY() {
		return cmdutil.UsageErrorf("refusing to purge tenant %q without confirmation: pass --yes", opts.ID)
	}
	fmt.Fprintf(ios.ErrOut, "Purge tenant %q and every row the hub stores for it? This cannot be undone. Type the tenant id to confirm: ", opts.ID)
	answer, err := bufio.NewReader(ios.In).ReadString('\n')
	if err != nil && err != io.EOF {
		return err
	}
	if strings.TrimSpace(answer) != opts.ID {
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("purge canceled: nothing was removed"))
	}
	return nil
}
