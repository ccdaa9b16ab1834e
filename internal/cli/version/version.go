// Package version implements `hubctl version`.
package version

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/buildinfo"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/output"
)

// NewCmd returns `hubctl version`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Example: `  hubctl version
  hubctl version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := buildinfo.Get()
			if format == "" {
				_, err := fmt.Fprintf(f.IOStreams.Out, "hubctl %s (commit %s, built %s, %s, %s)\n",
					info.Version, info.Commit, info.Date, info.GoVersion, info.Platform)
				return err
			}
			fm, err := cmdutil.ResolveFormat(f, format, output.JSON, output.YAML)
			if err != nil {
				return err
			}
			return output.New(f.IOStreams, fm).Print(info, nil)
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "", "output format: json or yaml (default: one line of text)")
	return cmd
}
