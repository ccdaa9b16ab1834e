// Package migrate implements `hubctl migrate up|down|status|force`.
package migrate

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// NewCmd returns `hubctl migrate`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply or inspect the database schema",
		Long: `Apply or inspect hubctl's PostgreSQL schema. The migrations are built into
the binary; the database comes from --database-url or STREAMING_HUB_POSTGRES_DSN.

hubctl serve refuses to start on a schema that is not exactly its own version.`,
	}
	cmd.AddCommand(NewCmdUp(f, nil), NewCmdDown(f, nil), NewCmdStatus(f, nil), NewCmdForce(f, nil))
	return cmd
}

func withMigrator(ctx context.Context, f *cmdutil.Factory, fn func(*pg.Migrator) error) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	mg, err := pg.NewMigrator(ctx, cfg.Postgres.DSN)
	if err != nil {
		return err
	}
	defer mg.Close()
	return fn(mg)
}

// printVersion tells the operator where a change left the schema.
func printVersion(f *cmdutil.Factory, mg *pg.Migrator) error {
	st, err := mg.Status()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f.IOStreams.ErrOut, "schema at version %d\n", st.Current)
	return err
}
