package subs

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"slices"
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

func subscriptionHeader(t *output.TableWriter) { subscriptionColumns(t) }

// subscriptionColumns heads the list's columns, and any extra ones after
// them (subscriptionRow's extra cells).
func subscriptionColumns(t *output.TableWriter, extra ...output.Column) {
	t.Columns(append([]output.Column{
		{Name: "id", Priority: 9},
		{Name: "name", Priority: 8, Min: 12},
		{Name: "sink", Priority: 6, Min: 12},
		{Name: "event types", Priority: 4, Min: 12},
		{Name: "delivery", Priority: 7},
		{Name: "verification", Priority: 5},
	}, extra...)...)
}

func subscriptionRow(t *output.TableWriter, f *cmdutil.Factory, sub hubapi.Subscription, extra ...string) {
	delivery := stateEnabled
	if !sub.Enabled {
		delivery = stateDisabled
	}
	t.Row(append([]string{sub.ID, sub.Name, sinkSummary(sub.Sink), strings.Join(sub.EventTypes, ","),
		output.Style(f.IOStreams, delivery), output.Style(f.IOStreams, sub.VerificationState)}, extra...)...)
}

// subscriptionTable shows one subscription field by field: everything a
// list row has, and what a support engineer asks next (the retry settings,
// the probe's error, what holds deliveries back, when it was made).
func subscriptionTable(t *output.TableWriter, f *cmdutil.Factory, sub hubapi.Subscription) {
	delivery := stateEnabled
	if !sub.Enabled {
		delivery = stateDisabled
		if sub.DisabledReason != nil {
			delivery += " (" + *sub.DisabledReason + ")"
		}
	}
	verification := output.Style(f.IOStreams, sub.VerificationState)
	if sub.VerificationError != "" {
		verification += ": " + sub.VerificationError
	}
	schedule := "default"
	if len(sub.RetrySchedule) > 0 {
		schedule = strings.Join(sub.RetrySchedule, " ")
	}
	rows := [][2]string{
		{"id", sub.ID},
		{"name", sub.Name},
		{"sink", sinkSummary(sub.Sink)},
	}
	rows = append(rows, sinkExtras(sub.Sink)...)
	if sub.SignatureScheme != "" {
		rows = append(rows, [2]string{"signature scheme", sub.SignatureScheme})
	}
	rows = append(rows, [][2]string{
		{"event types", strings.Join(sub.EventTypes, ",")},
		{"schema major", strconv.Itoa(sub.SchemaMajor)},
	}...)
	if sub.Origin != nil {
		rows = append(rows, [2]string{"origin", *sub.Origin})
	}
	if sub.Filter != nil {
		rows = append(rows, [2]string{"filter", *sub.Filter})
	}
	if sub.Ordering != "" && sub.Ordering != "none" {
		rows = append(rows, [2]string{"ordering", "by " + sub.Ordering})
	}
	if sub.RateLimit != nil {
		rows = append(rows, [2]string{"rate limit", rateSummary(*sub.RateLimit, sub.Rate)})
	}
	rows = append(rows,
		[2]string{"retry schedule", schedule},
		[2]string{"attempt timeout", sub.AttemptTimeout},
		[2]string{"delivery", output.Style(f.IOStreams, delivery)},
		[2]string{"verification", verification},
	)
	// What holds deliveries back: the destination's breaker and the open
	// failure span.
	if b := sub.Breaker; b != nil {
		rows = append(rows, [2]string{"breaker", breakerSummary(*b)})
	}
	if sub.FailingSince != nil {
		span := "failing since " + sub.FailingSince.UTC().Format(time.RFC3339)
		if sub.LastFailureAt != nil {
			span += ", last failure " + sub.LastFailureAt.UTC().Format(time.RFC3339)
		}
		rows = append(rows, [2]string{"failure span", span})
	}
	if sub.PreviousSecretExpiresAt != nil {
		rows = append(rows, [2]string{"previous secret until", sub.PreviousSecretExpiresAt.UTC().Format(time.RFC3339)})
	}
	rows = append(rows,
		[2]string{"created", sub.CreatedAt.UTC().Format(time.RFC3339)},
		[2]string{"updated", sub.UpdatedAt.UTC().Format(time.RFC3339)},
	)
	t.Header("field", "value")
	for _, r := range rows {
		t.Row(r[0], r[1])
	}
}

// rateSummary is "20/s", with the current rate and "throttled" when a
// single read brought the limiter's reading: "20/s (now 19.8/s, throttled)".
func rateSummary(limit float64, r *hubapi.Rate) string {
	out := strconv.FormatFloat(limit, 'f', -1, 64) + "/s"
	if r == nil {
		return out
	}
	out += " (now " + strconv.FormatFloat(r.Current, 'f', -1, 64) + "/s"
	if r.Throttled {
		out += ", throttled"
	}
	return out + ")"
}

// breakerSummary is "closed", "open until T" or "half-open", with the
// number of hub processes holding it when more than one.
func breakerSummary(b hubapi.Breaker) string {
	out := strings.ReplaceAll(b.State, "_", "-")
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

// sinkExtras are the rows of what a webhook sink sends beside the event:
// one per custom header, sorted by name, and its auth. Values are shown as
// the API read them, so the auth's password or token is its mask.
func sinkExtras(sink map[string]any) [][2]string {
	var rows [][2]string
	if headers, ok := sink["headers"].(map[string]any); ok {
		for _, name := range slices.Sorted(maps.Keys(headers)) {
			rows = append(rows, [2]string{"header", name + ": " + jsonText(headers[name])})
		}
	}
	if auth, ok := sink["auth"].(map[string]any); ok {
		rows = append(rows, [2]string{"auth", authSummary(auth)})
	}
	if ca, ok := sink["ca_cert"].(string); ok && ca != "" {
		rows = append(rows, [2]string{"ca cert", pemSummary(ca)})
	}
	return rows
}

// pemSummary names the first certificate of a PEM text rather than
// printing the text: its subject and when it expires.
func pemSummary(text string) string {
	block, _ := pem.Decode([]byte(text))
	if block == nil {
		return "PEM"
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "PEM " + strings.ToLower(block.Type)
	}
	return cert.Subject.String() + ", expires " + cert.NotAfter.UTC().Format(time.RFC3339)
}

// authSummary is the auth's type and its other fields by name:
// "basic (username hub, password ****)".
func authSummary(auth map[string]any) string {
	out := jsonText(auth["type"])
	var fields []string
	for _, name := range slices.Sorted(maps.Keys(auth)) {
		switch value := jsonText(auth[name]); {
		case name == "type":
		case strings.HasPrefix(value, "-----BEGIN"):
			fields = append(fields, name+" "+pemSummary(value))
		default:
			fields = append(fields, name+" "+value)
		}
	}
	if len(fields) > 0 {
		out += " (" + strings.Join(fields, ", ") + ")"
	}
	return out
}

// jsonText is a string as it is and any other JSON value as JSON.
func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(raw)
}
