package config

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/config"
)

// DocsOptions is `hubctl config docs` parsed.
type DocsOptions struct {
	Factory *cmdutil.Factory
}

// NewCmdDocs returns `hubctl config docs`; a non-nil runF replaces the real
// run.
func NewCmdDocs(f *cmdutil.Factory, runF func(*DocsOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:   "docs",
		Short: "Print the configuration reference (Markdown)",
		Long: `Print the reference of every setting, in Markdown: its environment variable,
YAML key, default, the values it accepts and what it does. It is generated
from the same registry that validates the settings, so it cannot drift;
docs/configuration.md in the repository is this output (make docs).

It reads no configuration, so it works whatever the environment holds.`,
		Example: `  hubctl config docs > docs/configuration.md`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Run(cmd.Context(), &DocsOptions{Factory: f}, runF, docsRun)
		},
	}
}

func docsRun(_ context.Context, opts *DocsOptions) error {
	return config.WriteReference(opts.Factory.IOStreams.Out)
}
