package portal

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/hubctl/hubctl/internal/activitytext"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// The activity of a tenant is its operational events, the inbox's hub.*
// events (SPEC §11), newest first.

const (
	// activityPage is how many events an activity page shows: each is
	// read whole for its data, so a page is kept shorter than a list's.
	activityPage = 25
	// subscriptionActivity is how many a subscription's page shows.
	subscriptionActivity = 5
	// activityChoices bounds the subscriptions the filter offers.
	activityChoices = 200
)

// activityRow is one operational event as a line.
type activityRow struct {
	ID, Type                         string
	Time                             time.Time
	SubscriptionID, SubscriptionName string
	Actor, Summary                   string
}

// activityRowOf reads an event's data into its line.
func activityRowOf(e hubapi.InboxEvent) activityRow {
	var data map[string]any
	_ = json.Unmarshal(e.Payload, &data)
	name, _ := data["subscription_name"].(string)
	return activityRow{ID: e.ID, Type: strings.TrimPrefix(e.Type, "hub."), Time: e.Time, SubscriptionID: e.Subject,
		SubscriptionName: name, Actor: activitytext.Actor(data["actor"]), Summary: activitytext.Summary(e.Type, data)}
}

// listActivity reads a page of the session's tenant's operational events,
// about one subscription when subscription is not "", with the cursor of
// the next page (nil on the last).
func listActivity(req *request, subscription string, limit int, cursor string) ([]activityRow, *string, error) {
	ctx := req.r.Context()
	page, err := req.hub.ListEvents(ctx, "", hubapi.EventListParams{ListParams: hubapi.ListParams{Limit: limit, Cursor: cursor},
		EventFilter: hubapi.EventFilter{Type: "hub.*", Subject: subscription}})
	if err != nil {
		return nil, nil, err
	}
	rows := make([]activityRow, 0, len(page.Items))
	for _, e := range page.Items {
		// The list leaves the data out; the line is made of it.
		detail, err := req.hub.GetEvent(ctx, "", e.ID)
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, activityRowOf(detail.InboxEvent))
	}
	return rows, page.NextCursor, nil
}

type activityPageData struct {
	Items []activityRow
	// Subscription is the filter, "" for every subscription; Choices the
	// subscriptions it offers.
	Subscription string
	Choices      []hubapi.Subscription
	// Unlisted says the filter names a subscription Choices do not hold
	// (a deleted one, or one past the bound).
	Unlisted bool
	Next     string
}

func (h *Handler) activity(req *request) error {
	if err := tenantOnly(req); err != nil {
		return err
	}
	q := req.r.URL.Query()
	subscription := q.Get("subscription")
	rows, next, err := listActivity(req, subscription, activityPage, q.Get("cursor"))
	if err != nil {
		return err
	}
	subs, err := req.hub.ListSubscriptions(req.r.Context(), "", hubapi.ListParams{Limit: activityChoices})
	if err != nil {
		return err
	}
	unlisted := subscription != "" && !slices.ContainsFunc(subs.Items, func(s hubapi.Subscription) bool { return s.ID == subscription })
	return h.render(req, "activity", activityPageData{Items: rows, Subscription: subscription, Choices: subs.Items,
		Unlisted: unlisted, Next: nextLink(req.r.URL, next)})
}
