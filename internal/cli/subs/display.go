package subs

import (
	"strconv"
	"strings"
	"time"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Delivery states as the table shows them.
const (
	stateEnabled  = "enabled"
	stateDisabled = "disabled"
)

func subscriptionHeader(t *output.TableWriter) {
	t.Header("id", "name", "sink", "event types", "delivery", "verification")
}

func subscriptionRow(t *output.TableWriter, f *cmdutil.Factory, sub hubapi.Subscription) {
	delivery := stateEnabled
	if !sub.Enabled {
		delivery = stateDisabled
	}
	t.Row(sub.ID, sub.Name, sinkSummary(sub.Sink), strings.Join(sub.EventTypes, ","),
		output.Style(f.IOStreams, delivery), output.Style(f.IOStreams, sub.VerificationState))
}

// subscriptionTable shows one subscription: its row, and the probe's error
// when verification failed, since that is what the user must fix.
func subscriptionTable(t *output.TableWriter, f *cmdutil.Factory, sub hubapi.Subscription) {
	subscriptionHeader(t)
	subscriptionRow(t, f, sub)
	if sub.VerificationError != "" {
		t.Row("", "", "", "", "", sub.VerificationError)
	}
	// What holds deliveries back, under the delivery column: the
	// destination's breaker and the open failure span.
	if b := sub.Breaker; b != nil {
		t.Row("", "", "", "", breakerSummary(*b), "")
	}
	if sub.FailingSince != nil {
		span := "failing since " + sub.FailingSince.UTC().Format(time.RFC3339)
		if sub.LastFailureAt != nil {
			span += ", last failure " + sub.LastFailureAt.UTC().Format(time.RFC3339)
		}
		t.Row("", "", "", "", span, "")
	}
}

// breakerSummary is "breaker closed", "breaker open until T" or "breaker
// half-open", with the number of hub processes holding it when more than one.
func breakerSummary(b hubapi.Breaker) string {
	out := "breaker " + strings.ReplaceAll(b.State, "_", "-")
	if b.State == hubapi.BreakerOpen && b.OpenUntil != nil {
		out += " until " + b.OpenUntil.UTC().Format(time.RFC3339)
	}
	if b.Instances > 1 {
		out += " (" + strconv.Itoa(b.Instances) + " instances)"
	}
	return out
}

// sinkSummary is the sink's type and, when it has one, its URL.
func sinkSummary(sink map[string]any) string {
	sinkType, _ := sink["type"].(string)
	if url, ok := sink["url"].(string); ok && url != "" {
		return sinkType + " " + url
	}
	return sinkType
}
