// Package man implements `hubctl man`, which writes the manual pages that
// releases ship (make docs).
package man

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/hubctl/hubctl/internal/buildinfo"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
)

// NewCmd returns `hubctl man`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var dir, date string
	cmd := &cobra.Command{
		Use:   "man",
		Short: "Generate man pages for every command",
		Long: `Generate one troff man page per command into a directory.

The pages carry a fixed date (--date, default: the build's commit date) so the
same source always produces the same files.`,
		Example: `  hubctl man --dir ./man
  man ./man/hubctl-subs-create.1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			when, err := pageDate(date)
			if err != nil {
				return cmdutil.WithCode(cmdutil.ExitUsage, err)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true
			header := &doc.GenManHeader{
				Title:   "HUBCTL",
				Section: "1",
				// No version: the pages are committed, and a build's
				// version (a commit, "-dirty") would change every page
				// at every regeneration whatever the commands did.
				Source: "hubctl",
				Manual: "hubctl manual",
				Date:   &when,
			}
			if err := doc.GenManTree(root, header, dir); err != nil {
				return fmt.Errorf("generate man pages: %w", err)
			}
			_, err = fmt.Fprintf(f.IOStreams.ErrOut, "man pages written to %s\n", dir)
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "man", "directory to write the pages to")
	cmd.Flags().StringVar(&date, "date", "", "page date, RFC 3339 or YYYY-MM-DD (default: SOURCE_DATE_EPOCH, else the build's commit date)")
	return cmd
}

func pageDate(flag string) (time.Time, error) {
	if flag != "" {
		for _, layout := range []string{time.RFC3339, time.DateOnly} {
			if t, err := time.Parse(layout, flag); err == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, fmt.Errorf("invalid --date %q: use RFC 3339 or YYYY-MM-DD", flag)
	}
	if epoch := os.Getenv("SOURCE_DATE_EPOCH"); epoch != "" {
		var secs int64
		if _, err := fmt.Sscan(epoch, &secs); err == nil {
			return time.Unix(secs, 0).UTC(), nil
		}
	}
	if t, err := time.Parse(time.RFC3339, buildinfo.Get().Date); err == nil {
		return t.UTC(), nil
	}
	// No stamp at all (a plain `go build` without VCS data): a fixed date is
	// still reproducible, the wall clock would not be.
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), nil
}
