// Package migrate implements `hubctl migrate up|down|status|force`.
package migrate

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/store"
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
	cmd.AddCommand(newUpCmd(f), newDownCmd(f), newStatusCmd(f), newForceCmd(f))
	return cmd
}

func withMigrator(ctx context.Context, f *cmdutil.Factory, fn func(*store.Migrator) error) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	mg, err := store.NewMigrator(ctx, cfg.Postgres.DSN)
	if err != nil {
		return err
	}
	defer mg.Close()
	return fn(mg)
}

func newUpCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "up",
		Short:   "Apply every pending migration",
		Example: `  hubctl migrate up --database-url postgres://hub@db/hub`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withMigrator(cmd.Context(), f, func(mg *store.Migrator) error {
				if err := mg.Up(); err != nil {
					return err
				}
				st, err := mg.Status()
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(f.IOStreams.ErrOut, "schema at version %d\n", st.Current)
				return err
			})
		},
	}
}

func newDownCmd(f *cmdutil.Factory) *cobra.Command {
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
			if all {
				steps = 0
			}
			return withMigrator(cmd.Context(), f, func(mg *store.Migrator) error {
				if err := mg.Down(steps); err != nil {
					return err
				}
				st, err := mg.Status()
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(f.IOStreams.ErrOut, "schema at version %d\n", st.Current)
				return err
			})
		},
	}
	cmd.Flags().IntVar(&steps, "steps", 1, "number of migrations to roll back")
	cmd.Flags().BoolVar(&all, "all", false, "roll back every migration")
	return cmd
}

// statusView is the shape of `migrate status -o json|yaml`.
type statusView struct {
	Current  uint   `json:"current"`
	Latest   uint   `json:"latest"`
	Dirty    bool   `json:"dirty"`
	Pending  []uint `json:"pending"`
	UpToDate bool   `json:"up_to_date"`
}

func newStatusCmd(f *cmdutil.Factory) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the applied and the built-in schema versions",
		Long: `Show the schema version of the database and of this binary. Exits 1 when
they differ, so scripts can gate a deploy on it.`,
		Example: `  hubctl migrate status
  hubctl migrate status -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			return withMigrator(cmd.Context(), f, func(mg *store.Migrator) error {
				st, err := mg.Status()
				if err != nil {
					return err
				}
				view := statusView{Current: st.Current, Latest: st.Latest, Dirty: st.Dirty, Pending: st.Pending, UpToDate: st.UpToDate()}
				if view.Pending == nil {
					view.Pending = []uint{}
				}
				err = output.New(f.IOStreams, fm).Print(view, func(t *output.TableWriter) {
					state := "up to date"
					switch {
					case st.Dirty:
						state = "dirty"
					case !st.UpToDate():
						state = "pending"
					}
					t.Header("current", "latest", "state")
					t.Row(strconv.FormatUint(uint64(st.Current), 10), strconv.FormatUint(uint64(st.Latest), 10), state)
				})
				if err == nil && !st.UpToDate() {
					return cmdutil.SilentExit(cmdutil.ExitFailure)
				}
				return err
			})
		},
	}
	cmdutil.AddOutputFlag(cmd, &format)
	return cmd
}

func newForceCmd(f *cmdutil.Factory) *cobra.Command {
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
			return withMigrator(cmd.Context(), f, func(mg *store.Migrator) error { return mg.Force(version) })
		},
	}
}
