package migrate

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// ForceOptions is `hubctl migrate force` parsed.
type ForceOptions struct {
	Factory *cmdutil.Factory
	Version int
}

// NewCmdForce returns `hubctl migrate force`; a non-nil runF replaces the
// real run.
func NewCmdForce(f *cmdutil.Factory, runF func(*ForceOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:   "force VERSION",
		Short: "Mark VERSION as applied and clean, running nothing",
		Long: `Record VERSION as the schema version and clear the dirty flag without running
any SQL. Use it only after repairing, by hand, a migration that failed half-way.`,
		Example: `  hubctl migrate force 1`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			version, err := strconv.Atoi(args[0])
			if err != nil || version < 0 {
				return cmdutil.UsageErrorf("invalid VERSION %q: must be a migration number", args[0])
			}
			return cmdutil.Run(cmd.Context(), &ForceOptions{Factory: f, Version: version}, runF, forceRun)
		},
	}
}

func forceRun(ctx context.Context, opts *ForceOptions) error {
	return withMigrator(ctx, opts.Factory, func(mg *pg.Migrator) error { return mg.Force(opts.Version) })
}
