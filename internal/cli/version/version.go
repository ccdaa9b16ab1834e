// Package version implements `hubctl version`.
package version

import (
	"fmt"
	"strings"

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
			if format == "" && !cmd.Flags().Changed("jq") {
				_, err := fmt.Fprintln(f.IOStreams.Out, versionLine(info))
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
	cmdutil.AddJQFlag(cmd, ".version")
	return cmd
}

// versionLine is the one line of text: what the build records say, and
// nothing about what they do not ("commit unknown" tells nobody anything).
func versionLine(info buildinfo.Info) string {
	parts := []string{}
	if info.Commit != buildinfo.Unknown {
		commit := "commit " + info.Commit
		if info.Modified {
			commit += " (modified)"
		}
		parts = append(parts, commit)
	}
	if info.Date != buildinfo.Unknown {
		parts = append(parts, "built "+info.Date)
	}
	parts = append(parts, info.GoVersion, info.Platform)
	return "hubctl " + info.Version + " (" + strings.Join(parts, ", ") + ")"
}
