package deliveries

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// ListHeader and ListRow are the table of a subscription's deliveries
// (hubctl subs deliveries).
func ListHeader(t *output.TableWriter) {
	t.Columns(
		output.Column{Name: "delivery", Priority: 9},
		output.Column{Name: "event", Priority: 3},
		output.Column{Name: "type", Priority: 6, Min: 12},
		// Wide enough for why a pending delivery waits.
		output.Column{Name: "state", Priority: 8, Min: 24},
		output.Column{Name: "attempts", Priority: 7},
		output.Column{Name: "last status", Priority: 5},
		output.Column{Name: "updated", Priority: 4},
	)
}

// ListRow is one delivery of ListHeader's table.
func ListRow(t *output.TableWriter, f *cmdutil.Factory, d hubapi.Delivery) {
	t.Row(d.ID, orDash(d.EventID), orDash(output.SafeText(d.EventType, 0)), stateText(f, d),
		strconv.Itoa(d.Attempts), optionalInt(d.LastStatus), d.UpdatedAt.Format(time.RFC3339))
}

// stateText is the state with why it is there: a dead delivery's reason,
// a pending one held back without spending an attempt.
func stateText(f *cmdutil.Factory, d hubapi.Delivery) string {
	state := output.Style(f.IOStreams, d.State)
	if d.DeadReason != nil {
		return state + " (" + output.Style(f.IOStreams, *d.DeadReason) + ")"
	}
	if held := heldText(d); held != "" {
		return state + " (held: " + held + ")"
	}
	return state
}

// heldText is why a pending delivery waits without spending an attempt,
// "" when it does not. The API names the breaker and the rate limit in
// held_reason; a delivery parked behind an earlier one of its ordering
// key has neither a held_reason nor a next_attempt_at, which a pending
// delivery has in every other case (docs/api.md, Ordered delivery).
func heldText(d hubapi.Delivery) string {
	switch {
	case d.State != hubapi.DeliveryPending:
		return ""
	case d.HeldReason != nil:
		return strings.ReplaceAll(*d.HeldReason, "_", " ")
	case d.NextAttemptAt == nil:
		return heldByKey
	}
	return ""
}

// heldByKey is heldText of a delivery parked behind its ordering key.
const heldByKey = "waiting for an earlier event of its key"

// nextAttemptText is when a delivery is tried next: a parked one when the
// earlier event of its key is done with, at no time known yet.
func nextAttemptText(d hubapi.Delivery) string {
	if heldText(d) == heldByKey {
		return "when the earlier event of its key is done"
	}
	return optionalTime(d.NextAttemptAt)
}

// errorWidth cuts an error in the attempts table: enough to tell one
// failure from another; -o json carries the whole text.
const errorWidth = 100

// writeSummary shows one delivery field by field, the state's details
// beside it, so a reader sees at once why a delivery is where it is. The
// job is labelled apart from the per-attempt delivery ids of the attempts
// table (X-Lerian-Delivery-Id), and the attempts of the current budget
// apart from every attempt recorded: a replay grants a fresh budget, the
// history keeps counting.
func writeSummary(w io.Writer, f *cmdutil.Factory, d hubapi.Delivery, recorded int) error {
	state := stateText(f, d)
	fields := [][2]string{
		{"Job", d.ID},
		{"Subscription", d.SubscriptionID},
		{"Event", orDash(d.EventID)},
		{"Type", orDash(output.SafeText(d.EventType, 0))},
		{"State", state},
		{"Attempts", attemptsText(d.Attempts, recorded)},
		{"Next attempt", nextAttemptText(d)},
		{"Last status", optionalInt(d.LastStatus)},
		{"Last error", optionalText(d.LastError, 0)},
		{"Created", d.CreatedAt.Format(time.RFC3339)},
		{"Updated", d.UpdatedAt.Format(time.RFC3339)},
	}
	if d.SucceededAt != nil {
		fields = append(fields, [2]string{"Succeeded", optionalTime(d.SucceededAt)})
	}
	if d.DeadAt != nil {
		fields = append(fields, [2]string{"Dead", optionalTime(d.DeadAt)})
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, field := range fields {
		fmt.Fprintf(tw, "%s:\t%s\n", field[0], field[1])
	}
	return tw.Flush()
}

// attemptsTable shows a delivery's attempts, oldest first.
func attemptsTable(t *output.TableWriter, f *cmdutil.Factory, attempts []hubapi.DeliveryAttempt) {
	t.Columns(
		output.Column{Name: "#", Priority: 9},
		output.Column{Name: "delivery id", Priority: 3},
		output.Column{Name: "started", Priority: 6},
		output.Column{Name: "latency", Priority: 5},
		output.Column{Name: "outcome", Priority: 8},
		output.Column{Name: "status", Priority: 7},
		output.Column{Name: "error", Priority: 4, Min: 12},
	)
	for _, a := range attempts {
		t.Row(strconv.Itoa(a.Attempt), a.ID, a.StartedAt.Format(time.RFC3339),
			(time.Duration(a.DurationMS) * time.Millisecond).String(), output.Style(f.IOStreams, a.Outcome),
			optionalInt(a.StatusCode), optionalText(a.Error, errorWidth))
	}
}

// attemptsText is the attempts of the current budget, and every attempt
// recorded when a replay made the two differ.
func attemptsText(budget, recorded int) string {
	if recorded <= budget {
		return strconv.Itoa(budget)
	}
	return fmt.Sprintf("%d since the last replay (%s recorded)", budget, output.Count(recorded, "attempt", "attempts"))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func optionalInt(n *int) string {
	if n == nil {
		return "-"
	}
	return strconv.Itoa(*n)
}

func optionalTime(at *time.Time) string {
	if at == nil {
		return "-"
	}
	return at.Format(time.RFC3339)
}

func optionalText(s *string, width int) string {
	if s == nil {
		return "-"
	}
	return orDash(output.SafeText(*s, width))
}
