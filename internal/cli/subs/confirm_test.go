package subs

import (
	"errors"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
)

// TestDeleteAsksOnATerminal answers "n" at a terminal: nothing is
// deleted (the hub is never reached); --yes asks nothing and goes on.
func TestDeleteAsksOnATerminal(t *testing.T) {
	f, stdin, _, _ := cmdtest.Factory(nil)
	f.IOStreams.SetStdinTTY(true)
	stdin.WriteString("n\n")
	var prompt strings.Builder
	f.IOStreams.ErrOut = &prompt
	err := cmdtest.Exec(t, f, NewCmdDelete(f, nil), "0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b")
	if !errors.Is(err, cmdutil.ErrAborted) || !strings.Contains(prompt.String(), "Delete subscription 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b") {
		t.Fatalf("answer n: %v, prompt %q; want aborted after the question", err, prompt.String())
	}

	f, _, _, _ = cmdtest.Factory(nil)
	f.IOStreams.SetStdinTTY(true)
	err = cmdtest.Exec(t, f, NewCmdDelete(f, nil), "0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b", "--yes")
	if errors.Is(err, cmdutil.ErrAborted) || err == nil || !strings.Contains(err.Error(), "no hub configured") {
		t.Fatalf("--yes: %v; want it to go on to the hub (none configured here)", err)
	}
}
