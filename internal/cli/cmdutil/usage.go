package cmdutil

import (
	"errors"
	"fmt"
	"strings"

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
		if c.HasParent() && c.HasSubCommands() && c.Run == nil && c.RunE == nil {
			refuseUnknownSubcommands(c)
		}
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

// refuseUnknownSubcommands makes a group of verbs (subs, tenants keys…)
// answer a mistyped verb the way the root does, "unknown command" with
// cobra's suggestions and exit 2, instead of printing its help and exiting
// 0, which a script would take for success. With no verb it still shows
// its help.
func refuseUnknownSubcommands(c *cobra.Command) {
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if cmd.SuggestionsMinimumDistance <= 0 {
			cmd.SuggestionsMinimumDistance = 2 // the root's default
		}
		if suggestions := cmd.SuggestionsFor(args[0]); len(suggestions) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(suggestions, "\n\t")
		}
		return errors.New(msg)
	}
	c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
}
