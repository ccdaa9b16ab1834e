// Package dlq implements `hubctl dlq list|replay`: a tenant's dead letters
// (SPEC §3.3), through the API or directly on the database (hubaccess).
package dlq

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// replayChunk is how many ids one replay request carries. Small enough that
// the progress shown moves, large enough that a big replay is few requests.
var replayChunk = 500

// NewCmd returns `hubctl dlq`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "List and replay dead letters",
		Long: `List and replay dead letters: deliveries that stopped trying, because their
retries ran out (exhausted), their worker kept dying mid-attempt (poison) or
their subscription was switched off with them queued (subscription_disabled).

A replay sends them back to pending, due at once, with a fresh attempt
budget; their attempt history stays. Dead letters of a deleted subscription
are never listed nor replayed.

Through the API (--server) the commands act on the tenant of a tenant API
key, or, with the admin token, on the tenant named by --tenant. Directly on
the database (--database-url) --tenant is always required. HUBCTL_TENANT
stands in for --tenant.`,
		Example: `  hubctl dlq list --reason exhausted --since 2026-12-01T00:00:00Z
  hubctl dlq replay --subscription 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --dry-run
  hubctl dlq replay --subscription 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --yes`,
	}
	cmd.PersistentFlags().String(hubaccess.FlagTenant, "", "tenant to act on ("+hubaccess.EnvTenant+"); required on the database and with the admin token")
	cmd.AddCommand(newListCmd(f), newReplayCmd(f))
	return cmd
}

// filterFlags are the selection both subcommands share.
type filterFlags struct {
	subscription, reason, since, until string
}

func (ff *filterFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&ff.subscription, "subscription", "", "only this subscription's dead letters")
	fs.StringVar(&ff.reason, "reason", "", "only dead letters of this reason: "+strings.Join(hubapi.DeadReasons, ", "))
	fs.StringVar(&ff.since, "since", "", "only dead letters that died at or after this time (RFC 3339)")
	fs.StringVar(&ff.until, "until", "", "only dead letters that died before this time (RFC 3339)")
}

func (ff filterFlags) filter() service.DeadLetterFilter {
	return service.DeadLetterFilter{SubscriptionID: ff.subscription, Reason: ff.reason, Since: ff.since, Until: ff.until}
}

func newListCmd(f *cmdutil.Factory) *cobra.Command {
	var (
		ff             filterFlags
		format, cursor string
		limit          int
	)
	cmd := &cobra.Command{
		Use:   "list [--subscription ID] [--reason R] [--since T] [--until T]",
		Short: "List dead letters, most recently dead first",
		Long: fmt.Sprintf(`List the tenant's dead letters, most recently dead first, --limit at a time
(at most %d). When more follow, -o json and -o yaml carry next_cursor and the
table prints the command for the next page on stderr.`, service.MaxPageLimit),
		Example: `  hubctl dlq list
  hubctl dlq list --subscription 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --reason exhausted -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			if err := cmdutil.CheckLimit(limit); err != nil {
				return err
			}
			params := service.DeadLetterListParams{ListParams: service.ListParams{Limit: limit, Cursor: cursor}, DeadLetterFilter: ff.filter()}
			page, err := hubaccess.CallForTenant(cmd.Context(), f, func(h hubaccess.Hub, tenant string) (hubapi.Page[hubapi.DeadLetter], error) {
				return h.ListDeadLetters(cmd.Context(), tenant, params)
			})
			if err != nil {
				return err
			}
			return output.PrintPage(output.New(f.IOStreams, fm), page, deadLetterHeader,
				func(t *output.TableWriter, d hubapi.DeadLetter) { deadLetterRow(t, f, d) },
				"dead letters", nextPageCommand(cmd))
		},
	}
	ff.register(cmd)
	cmdutil.AddOutputFlag(cmd, &format)
	cmdutil.AddPageFlags(cmd, &limit, &cursor, "dead letters")
	return cmd
}

func deadLetterHeader(t *output.TableWriter) {
	t.Header("delivery", "subscription", "event", "type", "reason", "attempts", "last status", "dead")
}

func deadLetterRow(t *output.TableWriter, f *cmdutil.Factory, d hubapi.DeadLetter) {
	t.Row(d.ID, d.SubscriptionID, orDash(d.EventID), orDash(d.EventType), output.Style(f.IOStreams, d.Reason),
		strconv.Itoa(d.Attempts), optionalInt(d.LastStatus), d.DeadAt.Format(time.RFC3339))
}

// nextPageCommand repeats the listing's own flags but its cursor, so the
// hint on stderr continues the same listing.
func nextPageCommand(cmd *cobra.Command) string {
	args := []string{cmd.CommandPath()}
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if fl.Name != "cursor" {
			args = append(args, "--"+fl.Name, fl.Value.String())
		}
	})
	return strings.Join(args, " ")
}

func newReplayCmd(f *cmdutil.Factory) *cobra.Command {
	var (
		ff          filterFlags
		ids         []string
		format      string
		dryRun, yes bool
	)
	cmd := &cobra.Command{
		Use:   "replay [--id ID ...] [--subscription ID] [--reason R] [--since T] [--until T] [--dry-run] [--yes]",
		Short: "Send dead letters back for delivery with a fresh attempt budget",
		Long: `Send the selected dead letters back to pending, due at once, with a fresh
attempt budget. --id (repeatable) names dead letters; the filters select them
by subscription, reason and time of death; given together, all must hold.
Their attempt history stays, and new attempts number on after it. Replaying
is idempotent: a dead letter already replayed is no longer dead.

--dry-run only counts. A replay by filters counts first and, on a terminal,
asks before replaying; a script must pass --yes, and without it the command
refuses (exit 2) rather than replay what nobody confirmed. Large replays go
in batches of 500, with progress on stderr.`,
		Example: `  hubctl dlq replay --reason exhausted --since 2026-12-01T00:00:00Z --dry-run
  hubctl dlq replay --subscription 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --yes
  hubctl dlq replay --id 0196a1c3-0a1b-7c2d-8e3f-405162738495`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := cmdutil.ResolveFormat(f, format)
			if err != nil {
				return err
			}
			r := replayer{f: f, ctx: cmd.Context(), filter: ff.filter(), ids: ids}
			var result hubapi.DeadLetterReplayResult
			err = hubaccess.RunForTenant(cmd.Context(), f, func(h hubaccess.Hub, tenant string) (err error) {
				r.hub, r.tenant = h, tenant
				result, err = r.run(dryRun, yes)
				return err
			})
			if err != nil {
				return err
			}
			return output.New(f.IOStreams, fm).Print(result, func(t *output.TableWriter) {
				t.Header("matched", "replayed", "dry run")
				t.Row(strconv.FormatInt(result.Matched, 10), strconv.FormatInt(result.Replayed, 10), strconv.FormatBool(result.DryRun))
			})
		},
	}
	ff.register(cmd)
	cmd.Flags().StringArrayVar(&ids, "id", nil, "replay this dead letter (repeatable)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only count the dead letters that would be replayed")
	cmd.Flags().BoolVar(&yes, "yes", false, "replay without asking (for scripts)")
	cmdutil.AddOutputFlag(cmd, &format)
	return cmd
}

// replayer carries one `dlq replay` through its steps: count, confirm,
// gather the ids, replay them in chunks.
type replayer struct {
	f      *cmdutil.Factory
	ctx    context.Context
	hub    hubaccess.Hub
	tenant string
	filter service.DeadLetterFilter
	ids    []string
}

func (r *replayer) run(dryRun, yes bool) (hubapi.DeadLetterReplayResult, error) {
	counted, err := r.count()
	if err != nil || dryRun {
		return counted, err
	}
	if counted.Matched == 0 {
		return hubapi.DeadLetterReplayResult{}, nil
	}
	// Naming ids is a confirmation in itself; a filter may select far
	// more than its author pictured.
	if len(r.ids) == 0 && !yes {
		if err := r.confirm(counted.Matched); err != nil {
			return hubapi.DeadLetterReplayResult{}, err
		}
	}
	ids := r.ids
	if len(ids) == 0 {
		if ids, err = r.gather(); err != nil {
			return hubapi.DeadLetterReplayResult{}, err
		}
	}
	return r.replay(ids)
}

// count is the dry run: how many dead letters the selection holds now.
func (r *replayer) count() (hubapi.DeadLetterReplayResult, error) {
	total := hubapi.DeadLetterReplayResult{DryRun: true}
	for chunk := range chunks(r.ids) {
		res, err := r.hub.ReplayDeadLetters(r.ctx, r.tenant, r.body(chunk, true))
		if err != nil {
			return hubapi.DeadLetterReplayResult{}, err
		}
		total.Matched += res.Matched
	}
	return total, nil
}

// confirm asks the person at the terminal, or refuses when nobody can
// answer.
func (r *replayer) confirm(matched int64) error {
	ios := r.f.IOStreams
	if !ios.IsStdinTTY() {
		return cmdutil.UsageErrorf("refusing to replay %d dead letters without confirmation: pass --yes (or --dry-run to only count)", matched)
	}
	fmt.Fprintf(ios.ErrOut, "Replay %d dead letters? [y/N] ", matched)
	answer, err := bufio.NewReader(ios.In).ReadString('\n')
	if err != nil && err != io.EOF {
		return err
	}
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("replay canceled: nothing was replayed"))
	}
	return nil
}

// gather lists the selection's ids, so the replay can go in chunks whose
// progress is real.
func (r *replayer) gather() ([]string, error) {
	var ids []string
	p := service.DeadLetterListParams{ListParams: service.ListParams{Limit: service.MaxPageLimit}, DeadLetterFilter: r.filter}
	for {
		page, err := r.hub.ListDeadLetters(r.ctx, r.tenant, p)
		if err != nil {
			return nil, err
		}
		for _, d := range page.Items {
			ids = append(ids, d.ID)
		}
		if page.NextCursor == nil {
			return ids, nil
		}
		p.Cursor = *page.NextCursor
	}
}

func (r *replayer) replay(ids []string) (hubapi.DeadLetterReplayResult, error) {
	progress := newProgress(r.f, len(ids))
	var total hubapi.DeadLetterReplayResult
	for chunk := range chunks(ids) {
		res, err := r.hub.ReplayDeadLetters(r.ctx, r.tenant, r.body(chunk, false))
		if err != nil {
			progress.abort()
			return hubapi.DeadLetterReplayResult{}, err
		}
		total.Matched += res.Matched
		total.Replayed += res.Replayed
		progress.advance(len(chunk))
	}
	progress.done()
	return total, nil
}

// body is one request: the chunk's ids (none: the filters alone) and the
// filters, which narrow ids too.
func (r *replayer) body(ids []string, dryRun bool) hubapi.DeadLetterReplay {
	return hubapi.DeadLetterReplay{
		IDs: ids, SubscriptionID: r.filter.SubscriptionID, Reason: r.filter.Reason,
		Since: r.filter.Since, Until: r.filter.Until, DryRun: dryRun,
	}
}

// chunks yields ids replayChunk at a time; no ids yields one nil chunk,
// which selects by the filters alone.
func chunks(ids []string) func(yield func([]string) bool) {
	return func(yield func([]string) bool) {
		if len(ids) == 0 {
			yield(nil)
			return
		}
		for start := 0; start < len(ids); start += replayChunk {
			if !yield(ids[start:min(start+replayChunk, len(ids))]) {
				return
			}
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func optionalInt(v *int) string {
	if v == nil {
		return "-"
	}
	return strconv.Itoa(*v)
}
