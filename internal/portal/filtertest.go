package portal

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/hubctl/hubctl/internal/filter"
	"github.com/hubctl/hubctl/internal/match"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// filterSample is how many of the tenant's latest events a filter is tried
// on before it is saved: enough to show whether it selects what was meant,
// few enough that reading each one's payload stays quick.
const filterSample = 25

// filterEvalTimeout bounds one evaluation, as ingest bounds it.
const filterEvalTimeout = 5 * time.Millisecond

// FilterTrial is how a filter and event types would have matched the
// tenant's latest events.
type FilterTrial struct {
	Filter, EventTypes string
	// Error is why the filter does not compile, "" when it does.
	Error string
	// Tried is how many events were tried, Matched how many matched.
	Tried, Matched int
}

// tryFilter compiles expr and tries it, with the event types, on the
// latest events of the session's tenant.
func tryFilter(ctx context.Context, hub hubapi.ControlPlane, expr, types string) (FilterTrial, error) {
	trial := FilterTrial{Filter: expr, EventTypes: types}
	var program *filter.Program
	if strings.TrimSpace(expr) != "" {
		p, err := filter.Compile(expr)
		if err != nil {
			trial.Error = err.Error()
			return trial, nil
		}
		program = p
	}
	page, err := hub.ListEvents(ctx, "", hubapi.EventListParams{ListParams: hubapi.ListParams{Limit: filterSample}})
	if err != nil {
		return trial, err
	}
	patterns := splitList(types)
	for _, e := range page.Items {
		trial.Tried++
		if !match.AnyPatternMatches(patterns, e.Type) {
			continue
		}
		if program == nil {
			trial.Matched++
			continue
		}
		// The list leaves payloads out; a filter may read them.
		detail, err := hub.GetEvent(ctx, "", e.ID)
		if err != nil {
			return trial, err
		}
		if ok, _ := program.MatchesWithin(filter.NewInput(filterEvent(detail.InboxEvent)), filterEvalTimeout); ok {
			trial.Matched++
		}
	}
	return trial, nil
}

// filterEvent is an inbox event as filters read it.
func filterEvent(e hubapi.InboxEvent) filter.Event {
	data := []byte(e.Payload)
	if e.PayloadEncoding == "base64" {
		var s string
		if err := json.Unmarshal(e.Payload, &s); err == nil {
			if decoded, err := base64.StdEncoding.DecodeString(s); err == nil {
				data = decoded
			}
		}
	}
	return filter.Event{
		ID: e.ID, Source: e.Source, Key: e.Type, Type: e.CEType, Subject: e.Subject, Time: e.Time,
		SchemaVersion: e.SchemaVersion, TenantID: e.TenantID, DataContentType: e.DataContentType, Data: data,
	}
}
