package subs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/when"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// RecoverOptions is `hubctl subs recover` parsed.
type RecoverOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	Ref     string
	// Since and Until are as typed: a duration back from now ("6h") or an
	// RFC 3339 time; Until "" is now.
	Since, Until string
	DryRun       bool
	Now          func() time.Time
}

// NewCmdRecover returns `hubctl subs recover`; a non-nil runF replaces the
// real run.
func NewCmdRecover(f *cmdutil.Factory, runF func(*RecoverOptions) error) *cobra.Command {
	opts := &RecoverOptions{Factory: f, Now: time.Now}
	var format string
	cmd := &cobra.Command{
		Use:   "recover ID|NAME --since 6h|T [--until T] [--dry-run]",
		Short: "Send again what a subscription missed since a time",
		Long: `Queue a delivery for every event the hub received in the range that matches
the subscription now (its event types, schema major, origin and filter) and
was never delivered to it: events that arrived while it was disabled,
unverified or auto-disabled included. An event whose delivery is dead goes
back to pending, as a replay would; one whose delivery is pending or in
flight is left alone, so recovering twice never sends an event twice.

--since and --until take an RFC 3339 time or a duration back from now
(6h, 90m); --until defaults to now. --dry-run only counts ("matched"; a real
run queues those of them not already pending or in flight). On a terminal,
progress shows on stderr. A disabled subscription is refused (enable it first); a pull
subscription too, since its reader's cursor says what it reads again.`,
		Example: `  hubctl subs recover orders-webhook --since 6h --dry-run
  hubctl subs recover 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --since 2026-12-01T00:00:00Z --until 2026-12-01T06:00:00Z`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			opts.Format, opts.Ref = fm, args[0]
			return cmdutil.Run(cmd.Context(), opts, runF, recoverRun)
		},
	}
	cmd.Flags().StringVar(&opts.Since, "since", "", "recover events received at or after this time: RFC 3339, or a duration back from now (6h)")
	cmd.Flags().StringVar(&opts.Until, "until", "", "and before this time, in the same forms (default: now)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "only count what would be queued")
	cmdutil.AddOutputFlag(cmd, &format, ".queued")
	return cmd
}

func recoverRun(ctx context.Context, opts *RecoverOptions) error {
	f := opts.Factory
	if opts.Since == "" {
		return cmdutil.UsageErrorf("--since is required: a time (2026-12-01T00:00:00Z) or a duration back from now (6h)")
	}
	now := opts.Now()
	since, err := ParseWhen("since", opts.Since, now)
	if err != nil {
		return err
	}
	until := now
	if opts.Until != "" {
		if until, err = ParseWhen("until", opts.Until, now); err != nil {
			return err
		}
	}
	if !since.Before(until) {
		return cmdutil.UsageErrorf("--until (%s) must be after --since (%s)", until.Format(time.RFC3339), since.Format(time.RFC3339))
	}
	in := hubapi.SubscriptionRecover{Since: since.UTC().Format(time.RFC3339Nano), Until: until.UTC().Format(time.RFC3339Nano), DryRun: opts.DryRun}
	bar := cmdutil.NewProgress(f, "Recovering", f.IOStreams.IsStderrTTY())
	result, err := hubaccess.CallForSubscription(ctx, f, opts.Ref, func(h hubapi.ControlPlane, tenant, id string) (hubapi.SubscriptionRecoverResult, error) {
		return h.RecoverSubscription(ctx, tenant, id, in, bar.Set)
	})
	bar.Done()
	if hubapi.ErrorCode(err) == hubapi.CodeSubscriptionDisabled {
		// The hub's message names its API field, dry_run; here it is a flag.
		return cmdutil.WithCode(cmdutil.ExitCode(err), fmt.Errorf("subscription %s is disabled: enable it first (hubctl subs enable %s), or pass --dry-run to only count", opts.Ref, opts.Ref))
	}
	if err != nil {
		return err
	}
	return output.New(f.IOStreams, opts.Format).Print(result, func(t *output.TableWriter) {
		t.Header("matched", "queued", "dry run")
		t.Row(strconv.FormatInt(result.Matched, 10), strconv.FormatInt(result.Queued, 10), strconv.FormatBool(result.DryRun))
	})
}

// ParseWhen reads a time flag: an RFC 3339 time, or a positive duration
// back from now.
func ParseWhen(flag, value string, now time.Time) (time.Time, error) {
	t, err := when.Parse(value, now)
	switch {
	case errors.Is(err, when.ErrNotPositive):
		return time.Time{}, cmdutil.UsageErrorf("--%s %s: %v", flag, value, err)
	case err != nil:
		return time.Time{}, cmdutil.UsageErrorf("--%s %q: %v", flag, value, err)
	}
	return t, nil
}
