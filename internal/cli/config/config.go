// Package config implements `hubctl config show|docs`.
package config

import (
	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/output"
)

// NewCmd returns `hubctl config`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Inspect hubctl's effective configuration",
	}
	cmd.AddCommand(newShowCmd(f), NewCmdDocs(f, nil))
	return cmd
}

func newShowCmd(f *cmdutil.Factory) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print every setting, its effective value and where it came from",
		Long: `Print every setting with its effective value and its source (flag, env,
file or default). Secrets are masked: tokens and passwords as ****, the
PostgreSQL DSN with only its password hidden.

A bad setting stops the command with one line naming it (exit 2), exactly as
it would stop hubctl serve.`,
		Example: `  hubctl config show
  STREAMING_HUB_DISPATCH_WORKERS=32 hubctl config show -o yaml
  hubctl config show --config /etc/hubctl.yaml -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			entries := cfg.Show()
			return output.New(f.IOStreams, fm).Print(entries, func(t *output.TableWriter) {
				t.Header("setting", "value", "source")
				for _, e := range entries {
					t.Row(e.Setting, e.Value, string(e.Source))
				}
			})
		},
	}
	cmdutil.AddOutputFlag(cmd, &format, "")
	return cmd
}
