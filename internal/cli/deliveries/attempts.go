package deliveries

import (
	"fmt"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// PrintAttempts writes a delivery's attempts as the table of
// `hubctl deliveries get`, for other commands that show deliveries.
func PrintAttempts(f *cmdutil.Factory, attempts []hubapi.DeliveryAttempt) error {
	if len(attempts) == 0 {
		_, err := fmt.Fprintln(f.IOStreams.Out, "No attempts yet.")
		return err
	}
	return output.New(f.IOStreams, output.Table).Print(nil, func(t *output.TableWriter) {
		attemptsTable(t, f, attempts)
	})
}
