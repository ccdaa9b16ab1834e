// Package activity is `hubctl activity`: the tenant's operational events,
// what happened to its subscriptions (docs/operational-events.md), oldest
// first, or followed as they come.
package activity

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubctl/hubctl/internal/activitytext"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/cli/subs"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

const (
	// defaultSince is how far back activity starts without --since.
	defaultSince = 24 * time.Hour
	// pollInterval spaces a follower's reads.
	pollInterval = time.Second
)

// Options is `hubctl activity` parsed.
type Options struct {
	Factory *cmdutil.Factory
	Format  output.Format
	// Subscription narrows to the events about one subscription, by id or
	// name; "" is every subscription of the tenant.
	Subscription string
	Since        time.Time
	Follow       bool
	// Interval spaces a follower's reads.
	Interval time.Duration
}

var formats = []output.Format{output.Table, output.JSON, output.JSONL}

// NewCmd returns `hubctl activity`; a non-nil runF replaces the real run.
func NewCmd(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	var format, since, subscription string
	var follow bool
	cmd := &cobra.Command{
		Use:   "activity [--subscription S] [--since T] [--follow]",
		Short: "Show what happened to the tenant's subscriptions",
		Long: `Show the tenant's activity: the hub's operational events about its
subscriptions (created, updated, disabled, failing, recovered, dead letters,
...), oldest first, each with who made it and what it says. They are inbox
events of type hub.*, which subscriptions may receive like any other
(docs/operational-events.md).

--since takes an RFC 3339 time or a duration back from now (default 24h);
--subscription an id or a name. With --follow, keep printing new activity
until interrupted.`,
		Example: `  hubctl activity --since 2h
  hubctl activity --subscription orders-webhook --follow
  hubctl activity -o jsonl | jq 'select(.type == "hub.subscription_failing")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format == "" && !f.IOStreams.IsStdoutTTY() && !cmd.Flags().Changed("jq") {
				format = string(output.JSONL)
			}
			fm, err := cmdutil.ResolveFormat(f, format, formats...)
			if err != nil {
				return err
			}
			opts := &Options{Factory: f, Format: fm, Subscription: subscription, Follow: follow, Interval: pollInterval,
				Since: time.Now().Add(-defaultSince)}
			if since != "" {
				if opts.Since, err = subs.ParseWhen("since", since, time.Now()); err != nil {
					return err
				}
			}
			return cmdutil.Run(cmd.Context(), opts, runF, run)
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "", "output format: table, json or jsonl (default: table on a terminal, else jsonl)")
	cmdutil.AddJQFlag(cmd, ".type")
	cmd.Flags().StringVar(&subscription, "subscription", "", "only the activity of this subscription (id or name)")
	cmd.Flags().StringVar(&since, "since", "", "activity at or after this time: RFC 3339, or a duration back from now (default 24h)")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new activity until interrupted")
	cmd.Flags().String(hubaccess.FlagTenant, "", "tenant to act on ("+hubaccess.EnvTenant+"); required on the database and with the admin token")
	return cmd
}

// Item is one line of activity, as -o json and jsonl print it.
type Item struct {
	ID             string          `json:"id"`
	Seq            int64           `json:"seq"`
	Type           string          `json:"type"`
	Time           time.Time       `json:"time"`
	SubscriptionID string          `json:"subscription_id"`
	Data           json.RawMessage `json:"data"`
}

func run(ctx context.Context, opts *Options) error {
	f := opts.Factory
	show := newPrinter(f, opts.Format)
	err := hubaccess.RunForTenant(ctx, f, func(h hubapi.ControlPlane, tenant string) error {
		subject, err := hubaccess.ResolveSubscriptionFlag(ctx, h, tenant, "subscription", opts.Subscription)
		if err != nil {
			return err
		}
		feed := newFeed(opts.Since)
		for {
			events, err := listSince(ctx, h, tenant, subject, feed.from())
			if err != nil {
				return err
			}
			for _, e := range feed.fresh(events) {
				detail, err := h.GetEvent(ctx, tenant, e.ID)
				if err != nil {
					return err
				}
				if err := show(itemOf(detail)); err != nil {
					return err
				}
			}
			if !opts.Follow {
				return nil
			}
			t := time.NewTimer(opts.Interval)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
	})
	if opts.Follow && errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil // interrupted: the way a follow ends
	}
	return err
}

// listSince reads every hub.* event received at or after since (about
// subject when not ""), in seq order.
func listSince(ctx context.Context, h hubapi.ControlPlane, tenant, subject string, since time.Time) ([]hubapi.InboxEvent, error) {
	p := hubapi.EventListParams{ListParams: hubapi.ListParams{Limit: hubapi.MaxPageLimit},
		EventFilter: hubapi.EventFilter{Type: "hub.*", Subject: subject, Since: since.UTC().Format(time.RFC3339Nano)}}
	var events []hubapi.InboxEvent
	for {
		page, err := h.ListEvents(ctx, tenant, p)
		if err != nil {
			return nil, err
		}
		events = append(events, page.Items...)
		if page.NextCursor == nil {
			break
		}
		p.Cursor = *page.NextCursor
	}
	sort.Slice(events, func(i, j int) bool { return events[i].Seq < events[j].Seq })
	return events, nil
}

func itemOf(d hubapi.EventDetail) Item {
	return Item{ID: d.ID, Seq: d.Seq, Type: d.Type, Time: d.Time, SubscriptionID: d.Subject, Data: d.Payload}
}

// newPrinter returns how one item is shown in format fm, each written
// whole as it comes.
func newPrinter(f *cmdutil.Factory, fm output.Format) func(Item) error {
	out := f.IOStreams.Out
	switch fm {
	case output.Table:
		table := output.NewStream(f.IOStreams, columns...)
		return func(it Item) error {
			var d map[string]any
			_ = json.Unmarshal(it.Data, &d)
			return table.Row(it.Time.UTC().Format(time.RFC3339), strings.TrimPrefix(it.Type, "hub."), subscriptionName(d), activitytext.Actor(d["actor"]), activitytext.Summary(it.Type, d))
		}
	case output.JSON:
		if filter := f.IOStreams.JSONFilter; filter != nil {
			return func(it Item) error { return filter.Write(out, it) }
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return func(it Item) error { return enc.Encode(it) }
	default:
		enc := json.NewEncoder(out)
		return func(it Item) error { return enc.Encode(it) }
	}
}

var columns = []output.Column{
	{Name: "time", Priority: 8, Width: len("2006-01-02T15:04:05Z")},
	{Name: "event", Priority: 9, Min: 12, Width: 24},
	{Name: "subscription", Priority: 7, Min: 10, Width: 24},
	{Name: "by", Priority: 4, Min: 6, Width: 16},
	{Name: "detail", Priority: 6, Min: 10, Width: 60},
}

func subscriptionName(d map[string]any) string {
	name, _ := d["subscription_name"].(string)
	return name
}
