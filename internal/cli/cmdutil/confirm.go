package cmdutil

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/iostreams"
)

// ErrAborted is what a destructive verb returns when the person at the
// terminal did not confirm it (exit 1: nothing was done).
var ErrAborted = errors.New("aborted: nothing was changed")

// AddYesFlag registers --yes on a destructive verb.
func AddYesFlag(cmd *cobra.Command, yes *bool) {
	cmd.Flags().BoolVarP(yes, "yes", "y", false, "do not ask for confirmation")
}

// ConfirmDestructive asks the person at the terminal to confirm action
// (worded as a question, "Delete subscription orders?") unless yes is set.
// Only a terminal is asked: a script cannot answer a prompt, and scripts
// that run destructive verbs already mean them. Anything but y or yes
// aborts with ErrAborted.
func ConfirmDestructive(ios *iostreams.IOStreams, yes bool, action string) error {
	if yes || !ios.IsStdinTTY() {
		return nil
	}
	fmt.Fprintf(ios.ErrOut, "%s [y/N] ", action)
	line, err := bufio.NewReader(ios.In).ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(ios.ErrOut)
		return ErrAborted
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return ErrAborted
}
