package migrate

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// StatusOptions is `hubctl migrate status` parsed.
type StatusOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
}

// statusView is the shape of `migrate status -o json|yaml`.
type statusView struct {
	Current  uint   `json:"current"`
	Latest   uint   `json:"latest"`
	Dirty    bool   `json:"dirty"`
	Pending  []uint `json:"pending"`
	UpToDate bool   `json:"up_to_date"`
}

// NewCmdStatus returns `hubctl migrate status`; a non-nil runF replaces
// the real run.
func NewCmdStatus(f *cmdutil.Factory, runF func(*StatusOptions) error) *cobra.Command {
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
			return cmdutil.Run(cmd.Context(), &StatusOptions{Factory: f, Format: fm}, runF, statusRun)
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, "")
	return cmd
}

func statusRun(ctx context.Context, opts *StatusOptions) error {
	return withMigrator(ctx, opts.Factory, func(mg *pg.Migrator) error {
		st, err := mg.Status()
		if err != nil {
			return err
		}
		err = printStatus(output.New(opts.Factory.IOStreams, opts.Format), st)
		if err == nil && !st.UpToDate() {
			return cmdutil.SilentExit(cmdutil.ExitFailure)
		}
		return err
	})
}

func printStatus(p *output.Printer, st pg.SchemaStatus) error {
	view := statusView{Current: st.Current, Latest: st.Latest, Dirty: st.Dirty, Pending: st.Pending, UpToDate: st.UpToDate()}
	if view.Pending == nil {
		view.Pending = []uint{}
	}
	return p.Print(view, func(t *output.TableWriter) {
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
}
