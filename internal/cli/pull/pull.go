// Package pull implements `hubctl pull`: read a pull subscription's events
// (docs/consuming.md, Pulling events), through the API or directly on the database (hubaccess), once
// or following the stream until interrupted.
package pull

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/pkg/client"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// defaultGiveUpAfter bounds how long a follower waits for a hub it never
// reached: long enough for a hub that is starting, short enough that a
// wrong address is noticed.
const defaultGiveUpAfter = 30 * time.Second

// directRetryAfter is how long a follower on the database waits once the
// database stops answering: the API's store_unavailable Retry-After.
const directRetryAfter = 5 * time.Second

// formats are those of a stream; yaml has no one-document-per-event form
// a program could read as it comes.
var formats = []output.Format{output.Table, output.JSON, output.JSONL}

// Options is `hubctl pull` parsed.
type Options struct {
	Factory *cmdutil.Factory
	Format  output.Format
	ID      string
	// Pull is the stream's setting: page size, --follow, --after.
	Pull client.PullOptions
}

// NewCmd returns `hubctl pull`; a non-nil runF replaces the real run.
func NewCmd(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	var (
		format      string
		follow      bool
		limit       int
		after       int64
		giveUpAfter time.Duration
	)
	cmd := &cobra.Command{
		Use:   "pull SUBSCRIPTION [--follow] [--limit N] [--after SEQ]",
		Short: "Read a pull subscription's events",
		Long: fmt.Sprintf(`Read a pull subscription's events, named by its id or its name, in seq
order, --limit per page (1-%d), page after page until a short page says the subscription is caught up. With
--follow, keep polling for new events (waiting longer while none come, and
as long as the hub asks on 429 and 503) until interrupted; Ctrl-C ends it
with exit status 0.

Reading is the ack: each page read moves the subscription's durable cursor
past its events, so the next pull continues where this one stopped. Events
are printed as they are read, never held back, so an interrupted pull has
printed everything it acked. --after SEQ starts after that seq instead of at
the cursor: ahead of the cursor it gives up the events skipped; behind it,
it re-reads without moving the cursor back. Events seen again (a re-read)
are printed once, by ceId.

Output: -o jsonl prints one compact JSON object per event and line, for jq
and other line-oriented tools (the default when stdout is not a terminal);
-o json prints each event as an indented JSON object; -o table prints SEQ,
TIME, TYPE, CE ID and SOURCE, as many as the terminal's width holds (SEQ,
TYPE and CE ID at 80 columns). The JSON is the API's item: seq, ceId, type,
ceType, source, tenantId, schemaVersion, time, receivedAt and payload (the
data as JSON, or base64 with payloadEncoding).

Through the API (--server) the command reads as the tenant of a tenant API
key, or, with the admin token, as the tenant named by --tenant. Directly on
the database (--database-url) --tenant is always required. HUBCTL_TENANT
stands in for --tenant.

--limit N prints at most N events and stops, following or not; only what
is printed is read, so nothing beyond it is acked. While it retries, the
command says why on stderr; a follow that has not reached the hub once
within --give-up-after exits 5.

Exits 3 when the tenant has no subscription with that id or name, 1 when it
is a push subscription, 5 when the hub or the database cannot be reached.`, hubapi.MaxPageLimit),
		Example: `  hubctl pull 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b
  hubctl pull 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --follow -o jsonl | jq .payload
  hubctl pull 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b --after 0 --limit 1000 -o table`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format == "" && !f.IOStreams.IsStdoutTTY() && !cmd.Flags().Changed("jq") {
				format = string(output.JSONL)
			}
			fm, err := cmdutil.ResolveFormat(f, format, formats...)
			if err != nil {
				return err
			}
			if err := cmdutil.CheckLimit(limit); err != nil {
				return err
			}
			opts := client.PullOptions{Limit: limit, Follow: follow, Retryable: retryable, GiveUpAfter: giveUpAfter}
			if cmd.Flags().Changed("limit") {
				opts.Max = limit
			}
			if giveUpAfter <= 0 {
				return cmdutil.UsageErrorf("invalid --give-up-after %s: must be positive", giveUpAfter)
			}
			opts.OnRetry = func(r client.Retry) { reportRetry(f, r) }
			if cmd.Flags().Changed("after") {
				if after < 0 {
					return cmdutil.UsageErrorf("invalid --after %d: must be a seq, 0 or more", after)
				}
				opts.After = &after
			}
			return cmdutil.Run(cmd.Context(), &Options{Factory: f, Format: fm, ID: args[0], Pull: opts}, runF, run)
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "", "output format: table, json or jsonl (default: table on a terminal, else jsonl)")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep polling for new events until interrupted")
	cmd.Flags().IntVar(&limit, "limit", hubapi.DefaultPageLimit, fmt.Sprintf("print at most this many events, then stop, also with --follow (1-%d; default: pages of %d without end)", hubapi.MaxPageLimit, hubapi.DefaultPageLimit))
	cmd.Flags().DurationVar(&giveUpAfter, "give-up-after", defaultGiveUpAfter, "with --follow, exit 5 when the hub has not answered once in this long")
	cmdutil.AddJQFlag(cmd, ".seq")
	cmd.Flags().Int64Var(&after, "after", 0, "start after this seq instead of at the subscription's cursor")
	cmd.Flags().String(hubaccess.FlagTenant, "", "tenant to act on ("+hubaccess.EnvTenant+"); required on the database and with the admin token")
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	f := opts.Factory
	err := hubaccess.RunForTenant(ctx, f, func(h hubapi.ControlPlane, tenant string) error {
		var id string
		stream := client.NewPull(func(ctx context.Context, limit int, after *int64) (hubapi.PullPage, error) {
			// The name is looked up on the first read, so a follower of a
			// hub that is starting waits for it as it does for the read.
			if id == "" {
				resolved, err := hubaccess.ResolveSubscription(ctx, h, tenant, opts.ID)
				if err != nil {
					return hubapi.PullPage{}, err
				}
				id = resolved
			}
			page, err := h.ReadEvents(ctx, tenant, id, hubapi.PullParams{Limit: limit, After: after})
			if err == nil && page.EventsExpired {
				// The events skipped are gone; the one line says so, on
				// stderr so that the stream itself stays events only.
				fmt.Fprintln(f.IOStreams.ErrOut, "warning: this read started behind retention (STREAMING_HUB_RETENTION_EVENTS): "+
					"events after it expired before they were read; resuming at the oldest retained event")
			}
			return page, err
		}, opts.Pull)
		return copyEvents(ctx, stream, newPrinter(f, opts.Format))
	})
	if opts.Pull.Follow && errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil // interrupted: the way a follow ends
	}
	return err
}

// retryable is client.Retryable plus the direct mode's own refusal: a
// database that does not answer, waited out like the API's 503.
func retryable(err error) (time.Duration, bool) {
	if errors.Is(err, pg.ErrUnavailable) {
		return directRetryAfter, true
	}
	return client.Retryable(err)
}

// reportRetry says on stderr why the read failed and when it is tried
// again: a follower that waits in silence looks like one with nothing to
// read.
func reportRetry(f *cmdutil.Factory, r client.Retry) {
	what := "the hub did not answer"
	if r.Reached {
		what = "the hub refused the read for now"
	}
	fmt.Fprintf(f.IOStreams.ErrOut, "hubctl pull: %s (%v); retrying in %s\n", what, r.Err, r.Wait.Round(time.Millisecond))
}

// copyEvents prints every event the stream yields until it ends: io.EOF is
// the end of a pull without --follow.
func copyEvents(ctx context.Context, stream *client.Pull, print func(hubapi.PullEvent) error) error {
	for {
		e, err := stream.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := print(e); err != nil {
			return err
		}
	}
}

// newPrinter returns how one event is shown in format fm. Each event is
// written whole as it comes: a stream has no end to wait for.
func newPrinter(f *cmdutil.Factory, fm output.Format) func(hubapi.PullEvent) error {
	out := f.IOStreams.Out
	switch fm {
	case output.Table:
		table := output.NewStream(f.IOStreams, streamColumns...)
		return func(e hubapi.PullEvent) error {
			return table.Row(strconv.FormatInt(e.Seq, 10), e.Time.UTC().Format(time.RFC3339), e.Type, e.CEID, e.Source)
		}
	case output.JSON:
		if filter := f.IOStreams.JSONFilter; filter != nil {
			return func(e hubapi.PullEvent) error { return filter.Write(out, e) }
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return func(e hubapi.PullEvent) error { return enc.Encode(e) }
	default:
		enc := json.NewEncoder(out)
		return func(e hubapi.PullEvent) error { return enc.Encode(e) }
	}
}

// streamColumns are laid out before any event arrives. SEQ holds every
// seq the hub hands out (they stay below 2^53, 16 digits), so the columns
// never shift as seqs grow; at 80 columns SEQ, TYPE and CE ID are shown.
var streamColumns = []output.Column{
	{Name: "seq", Priority: 9, Width: 16},
	{Name: "time", Priority: 4, Width: len("2006-01-02T15:04:05Z")},
	{Name: "type", Priority: 8, Min: 12, Width: 28},
	{Name: "ce id", Priority: 7, Min: 36, Width: 36},
	{Name: "source", Priority: 3, Min: 8, Width: 24},
}
