package cmdutil

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hubctl/hubctl/internal/config"
)

// MustBindFlag ties a flag to a setting (flag > env > file > default). A
// wrong name is a programming error caught by every test that builds the
// command tree, hence the panic.
func MustBindFlag(fs *pflag.FlagSet, flagName, settingEnv string) {
	if err := config.BindFlag(fs, flagName, settingEnv); err != nil {
		panic(err)
	}
}

// MarkUsageErrors makes cobra's own complaints (bad flags, wrong number of
// arguments) exit 2 like every other usage error, across the whole tree.
func MarkUsageErrors(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &ExitError{Code: ExitUsage, Err: err, Hint: true}
	})
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if args := c.Args; args != nil {
			c.Args = func(cmd *cobra.Command, a []string) error {
				if err := args(cmd, a); err != nil {
					return &ExitError{Code: ExitUsage, Err: err, Hint: true}
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
