package cmdutil

import (
	"errors"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/iostreams"
)

func TestConfirmDestructive(t *testing.T) {
	for _, tc := range []struct {
		name       string
		tty, yes   bool
		answer     string
		wantErr    error
		wantPrompt bool
	}{
		{name: "terminal, yes typed", tty: true, answer: "yes\n", wantPrompt: true},
		{name: "terminal, y typed", tty: true, answer: " Y \n", wantPrompt: true},
		{name: "terminal, enter aborts", tty: true, answer: "\n", wantErr: ErrAborted, wantPrompt: true},
		{name: "terminal, no aborts", tty: true, answer: "no\n", wantErr: ErrAborted, wantPrompt: true},
		{name: "terminal, end of input aborts", tty: true, answer: "", wantErr: ErrAborted, wantPrompt: true},
		{name: "terminal, --yes asks nothing", tty: true, yes: true},
		{name: "script asks nothing", tty: false, answer: "no\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ios, in, _, errOut := iostreams.Test()
			ios.SetStdinTTY(tc.tty)
			in.WriteString(tc.answer)
			err := ConfirmDestructive(ios, tc.yes, "Delete subscription orders?")
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if got := strings.Contains(errOut.String(), "Delete subscription orders? [y/N]"); got != tc.wantPrompt {
				t.Fatalf("prompt shown = %v (stderr %q), want %v", got, errOut.String(), tc.wantPrompt)
			}
			if tc.wantErr != nil && ExitCode(err) != ExitFailure {
				t.Fatalf("exit code %d, want %d", ExitCode(err), ExitFailure)
			}
		})
	}
}
