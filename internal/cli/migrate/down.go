package migrate

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// DownOptions is `hubctl migrate down` parsed.
type DownOptions struct {
	Factory *cmdutil.Factory
	// Steps is how many migrations to roll back; 0 means all of them.
	Steps int
}

// NewCmdDown returns `hubctl migrate down`; a non-nil runF replaces the
// real run.
func NewCmdDown(f *cmdutil.Factory, runF func(*DownOptions) error) *cobra.Command {
	var steps int
	var all bool
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Roll back migrations (one by default)",
		Long: `Roll back the newest migration, or --steps N of them, or --all.
Rolling back drops tables and the data in them.`,
		Example: `  hubctl migrate down
  hubctl migrate down --all`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if all && cmd.Flags().Changed("steps") {
				return cmdutil.UsageErrorf("--all and --steps exclude each other")
			}
			if !all && steps < 1 {
				return cmdutil.UsageErrorf("invalid --steps %d: must be at least 1", steps)
			}
			opts := &DownOptions{Factory: f, Steps: steps}
			if all {
				opts.Steps = 0
			}
			return cmdutil.Run(cmd.Context(), opts, runF, downRun)
		},
	}
	cmd.Flags().IntVar(&steps, "steps", 1, "number of migrations to roll back")
	cmd.Flags().BoolVar(&all, "all", false, "roll back every migration")
	return cmd
}

func downRun(ctx context.Context, opts *DownOptions) error {
	return withMigrator(ctx, opts.Factory, func(mg *pg.Migrator) error {
		if err := mg.Down(opts.Steps); err != nil {
			return err
		}
		return printVersion(opts.Factory, mg)
	})
}
