package kek

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/service"
)

// ReencryptOptions is `hubctl kek reencrypt` parsed.
type ReencryptOptions struct {
	Factory   *cmdutil.Factory
	Format    output.Format
	DryRun    bool
	BatchSize int
}

// NewCmdReencrypt returns `hubctl kek reencrypt`; a non-nil runF replaces
// the real run.
func NewCmdReencrypt(f *cmdutil.Factory, runF func(*ReencryptOptions) error) *cobra.Command {
	var (
		format string
		opts   = ReencryptOptions{Factory: f}
	)
	cmd := &cobra.Command{
		Use:   "reencrypt [--dry-run]",
		Short: "Seal every stored secret under the active key",
		Long: `Decrypt every stored envelope with whichever KEK key sealed it and seal it
again under the active (first) key, for the same subscription and field.
Each subscription is rewritten only if it still holds what was read, so a
secret rotated or a subscription updated meanwhile is never overwritten; the
hub keeps running and delivering throughout. Running it again is harmless.

Run it only once every hubctl serve has the new KEK value, with the new key
first: a process without the new key cannot open what this writes.

--dry-run opens every envelope, proving the KEK can, and writes nothing.
Exits 1 when some envelope cannot be opened by any configured key, listing
the subscriptions and fields; every other envelope is still moved.`,
		Example: `  hubctl kek reencrypt --dry-run
  hubctl kek reencrypt -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			if opts.BatchSize < 1 || opts.BatchSize > 10000 {
				return cmdutil.UsageErrorf("invalid --batch-size %d: must be from 1 to 10000", opts.BatchSize)
			}
			opts.Format = fm
			return cmdutil.Run(cmd.Context(), &opts, runF, reencryptRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".reencrypted")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "open every envelope and count what would move; write nothing")
	cmd.Flags().IntVar(&opts.BatchSize, "batch-size", 500, "subscriptions read per round trip")
	return cmd
}

func reencryptRun(ctx context.Context, opts *ReencryptOptions) error {
	return withKEK(ctx, opts.Factory, func(kek *service.KEK) error {
		result, err := kek.Reencrypt(ctx, service.ReencryptOptions{DryRun: opts.DryRun, BatchSize: opts.BatchSize})
		if err != nil {
			return err
		}
		moved := "re-encrypted"
		if result.DryRun {
			moved = "to re-encrypt"
		}
		err = output.New(opts.Factory.IOStreams, opts.Format).Print(result, func(t *output.TableWriter) {
			t.Header("active key", "examined", moved, "already current", "failed")
			t.Row(result.ActiveKeyID, strconv.Itoa(result.Examined), strconv.Itoa(result.Reencrypted),
				strconv.Itoa(result.Current), strconv.Itoa(len(result.Failed)))
		})
		if err != nil {
			return err
		}
		if len(result.Failed) == 0 {
			return nil
		}
		if opts.Format == output.Table {
			for _, f := range result.Failed {
				fmt.Fprintf(opts.Factory.IOStreams.ErrOut, "subscription %s %s: %s\n", f.SubscriptionID, f.Column, f.Reason)
			}
		}
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("%d stored secrets could not be opened by any key of the KEK; they were left as they were", len(result.Failed)))
	})
}
