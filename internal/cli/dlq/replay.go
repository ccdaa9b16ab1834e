package dlq

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// replayChunk is how many ids one replay request carries. Small enough that
// the progress shown moves, large enough that a big replay is few requests.
var replayChunk = 500

// ReplayOptions is `hubctl dlq replay` parsed.
type ReplayOptions struct {
	Factory *cmdutil.Factory
	Format  output.Format
	Filter  hubapi.DeadLetterFilter
	IDs     []string
	DryRun  bool
	Yes     bool
}

// NewCmdReplay returns `hubctl dlq replay`; a non-nil runF replaces the real
// run.
func NewCmdReplay(f *cmdutil.Factory, runF func(*ReplayOptions) error) *cobra.Command {
	var (
		ff          filterFlags
		ids         []string
		format      string
		dryRun, yes bool
	)
	cmd := &cobra.Command{
		Use:   "replay [--id ID ...] [--subscription ID|NAME] [--reason R] [--since T] [--until T] [--dry-run] [--yes]",
		Short: "Send dead letters back for delivery with a fresh attempt budget",
		Long: `Send the selected dead letters back to pending, due at once, with a fresh
attempt budget. --id (repeatable) names dead letters; the filters select them
by subscription, reason and time of death; given together, all must hold.
Their attempt history stays, and new attempts number on after it. Replaying
is idempotent: a dead letter already replayed is no longer dead. When the
ids given with --id match no dead letter at all, the command exits 3.

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
			opts := &ReplayOptions{Factory: f, Format: fm, Filter: ff.filter(), IDs: ids, DryRun: dryRun, Yes: yes}
			return cmdutil.Run(cmd.Context(), opts, runF, replayRun)
		},
	}
	ff.register(cmd)
	cmd.Flags().StringArrayVar(&ids, "id", nil, "replay this dead letter (repeatable)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only count the dead letters that would be replayed")
	cmd.Flags().BoolVar(&yes, "yes", false, "replay without asking (for scripts)")
	cmdutil.AddOutputFlag(cmd, &format, ".replayed")
	return cmd
}

func replayRun(ctx context.Context, opts *ReplayOptions) error {
	f := opts.Factory
	r := replayer{f: f, ctx: ctx, filter: opts.Filter, ids: opts.IDs}
	var result hubapi.DeadLetterReplayResult
	err := hubaccess.RunForTenant(ctx, f, func(h hubapi.ControlPlane, tenant string) (err error) {
		r.hub, r.tenant = h, tenant
		if r.filter.SubscriptionID, err = hubaccess.ResolveSubscriptionFlag(ctx, h, tenant, flagSubscription, r.filter.SubscriptionID); err != nil {
			return err
		}
		result, err = r.run(opts.DryRun, opts.Yes)
		return err
	})
	if err != nil {
		return err
	}
	return output.New(f.IOStreams, opts.Format).Print(result, func(t *output.TableWriter) {
		t.Header("matched", "replayed", "dry run")
		t.Row(strconv.FormatInt(result.Matched, 10), strconv.FormatInt(result.Replayed, 10), strconv.FormatBool(result.DryRun))
	})
}

// replayer carries one `dlq replay` through its steps: count, confirm,
// gather the ids, replay them in chunks.
type replayer struct {
	f      *cmdutil.Factory
	ctx    context.Context
	hub    hubapi.ControlPlane
	tenant string
	filter hubapi.DeadLetterFilter
	ids    []string
}

func (r *replayer) run(dryRun, yes bool) (hubapi.DeadLetterReplayResult, error) {
	counted, err := r.count()
	if err != nil {
		return counted, err
	}
	if len(r.ids) > 0 && counted.Matched == 0 {
		// Ids are named on purpose: a typo or one already replayed must not
		// pass for a replay that found nothing to do.
		return hubapi.DeadLetterReplayResult{}, cmdutil.WithCode(cmdutil.ExitNotFound,
			fmt.Errorf("no dead letter%s matches %s: not dead letters of this tenant, already replayed, or outside the filters", hubaccess.InTenant(r.tenant), idsGiven(r.ids)))
	}
	if dryRun {
		return counted, nil
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

// idsGiven names the --id values for a message, without a wall of them.
func idsGiven(ids []string) string {
	if len(ids) == 1 {
		return "--id " + ids[0]
	}
	return fmt.Sprintf("any of the %d ids given with --id", len(ids))
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
	p := hubapi.DeadLetterListParams{ListParams: hubapi.ListParams{Limit: hubapi.MaxPageLimit}, DeadLetterFilter: r.filter}
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
