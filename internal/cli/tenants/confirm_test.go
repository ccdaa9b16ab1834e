package tenants

import (
	"errors"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
)

func TestDeactivateAsksOnATerminal(t *testing.T) {
	f, stdin, _, _ := cmdtest.Factory(nil)
	f.IOStreams.SetStdinTTY(true)
	stdin.WriteString("\n")
	if err := cmdtest.Exec(t, f, NewCmdDeactivate(f, nil), "acme"); !errors.Is(err, cmdutil.ErrAborted) {
		t.Fatalf("enter at the question: %v, want aborted", err)
	}
	// Activating is not destructive: no question, no --yes.
	f, _, _, _ = cmdtest.Factory(nil)
	f.IOStreams.SetStdinTTY(true)
	if err := cmdtest.Exec(t, f, NewCmdActivate(f, nil), "acme"); errors.Is(err, cmdutil.ErrAborted) {
		t.Fatal("activate asked for confirmation")
	}
	if err := cmdtest.Exec(t, f, NewCmdActivate(f, nil), "acme", "--yes"); err == nil || !strings.Contains(err.Error(), "unknown flag") {
		t.Fatalf("activate --yes: %v, want an unknown flag", err)
	}
}
