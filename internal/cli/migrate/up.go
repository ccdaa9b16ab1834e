package migrate

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// UpOptions is `hubctl migrate up` parsed.
type UpOptions struct {
	Factory *cmdutil.Factory
}

// NewCmdUp returns `hubctl migrate up`; a non-nil runF replaces the real run.
func NewCmdUp(f *cmdutil.Factory, runF func(*UpOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:     "up",
		Short:   "Apply every pending migration",
		Example: `  hubctl migrate up --database-url postgres://hub@db/hub`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Run(cmd.Context(), &UpOptions{Factory: f}, runF, upRun)
		},
	}
}

func upRun(ctx context.Context, opts *UpOptions) error {
	return withMigrator(ctx, opts.Factory, func(mg *pg.Migrator) error {
		if err := mg.Up(); err != nil {
			return err
		}
		return printVersion(opts.Factory, mg)
	})
}
