package kek

import (
	"context"
	"maps"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/service"
)

// StatusOptions is `hubctl kek status` parsed.
type StatusOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
}

// NewCmdStatus returns `hubctl kek status`; a non-nil runF replaces the real
// run.
func NewCmdStatus(f *cmdutil.Factory, runF func(*StatusOptions) error) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Count the stored secrets by the key they are sealed under",
		Long: `Count the stored envelopes (signing secrets, sink credentials) by the id of
the key that sealed them, and show the active key's id: the first key of the
KEK, or k followed by 8 hex digits of its fingerprint for a single unnamed
key. "outdated" counts envelopes under any other key; when it is 0, keys
other than the active one can leave the KEK. Nothing is decrypted.`,
		Example: `  hubctl kek status
  hubctl kek status -o json | jq .outdated`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			return cmdutil.Run(cmd.Context(), &StatusOptions{Factory: f, Format: fm}, runF, statusRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, ".active_key_id")
	return cmd
}

func statusRun(ctx context.Context, opts *StatusOptions) error {
	return withKEK(ctx, opts.Factory, func(kek *service.KEK) error {
		status, err := kek.Status(ctx)
		if err != nil {
			return err
		}
		ios := opts.Factory.IOStreams
		return output.New(ios, opts.Format).Print(status, func(t *output.TableWriter) {
			t.Header("key id", "envelopes", "")
			ids := slices.Sorted(maps.Keys(status.Envelopes))
			if !slices.Contains(ids, status.ActiveKeyID) {
				ids = append(ids, status.ActiveKeyID)
			}
			for _, id := range ids {
				mark := "outdated"
				if id == status.ActiveKeyID {
					mark = "active"
				}
				t.Row(id, strconv.Itoa(status.Envelopes[id]), mark)
			}
			if status.Malformed > 0 {
				t.Row("(not an envelope)", strconv.Itoa(status.Malformed), "outdated")
			}
		})
	})
}
