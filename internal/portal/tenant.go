package portal

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hubctl/hubctl/internal/when"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// pageSize is how many rows a list page shows; the lists page by cursor,
// so a tenant with 100,000 deliveries pages as fast as one with ten.
const pageSize = 50

func (h *Handler) routes() {
	h.mux.HandleFunc("GET /portal/{$}", h.session(h.home))
	h.mux.HandleFunc("GET /portal/subscriptions/new", h.session(h.newSubscription))
	h.mux.HandleFunc("POST /portal/subscriptions", h.session(h.createSubscription))
	h.mux.HandleFunc("GET /portal/subscriptions/{id}", h.session(h.subscription))
	h.mux.HandleFunc("POST /portal/subscriptions/{id}/{action}", h.session(h.subscriptionAction))
	h.mux.HandleFunc("GET /portal/subscriptions/{id}/deliveries", h.session(h.deliveries))
	h.mux.HandleFunc("GET /portal/subscriptions/{id}/filter-test", h.session(h.filterTest))
	h.mux.HandleFunc("GET /portal/subscriptions/{id}/live", h.session(h.live))
	h.mux.HandleFunc("GET /portal/subscriptions/{id}/live/stream", h.session(h.liveStream))
	h.mux.HandleFunc("GET /portal/deliveries/{id}", h.session(h.delivery))
	h.mux.HandleFunc("GET /portal/dead-letters", h.session(h.deadLetters))
	h.mux.HandleFunc("POST /portal/dead-letters/replay", h.session(h.replay))
	h.mux.HandleFunc("GET /portal/events", h.session(h.events))
	h.mux.HandleFunc("GET /portal/events/{id}", h.session(h.event))
	h.mux.HandleFunc("GET /portal/activity", h.session(h.activity))
	h.consoleRoutes()
	h.mux.HandleFunc("/portal/", h.session(func(req *request) error {
		return &hubapi.NotFoundError{Code: "not_found", Message: "There is no such page in the portal."}
	}))
}

// tenantOnly keeps the operator console out of the tenant pages: the
// admin acts on a named tenant, which these pages do not name.
func tenantOnly(req *request) error {
	if req.caller.Kind != hubapi.CallerPortal {
		return &hubapi.NotFoundError{Code: "not_found", Message: "This page is a tenant's; the operator console starts at /portal/."}
	}
	return nil
}

type subscriptionsPage struct {
	Items []subscriptionRow
	Next  string
}

// subscriptionRow is a subscription of the list with its last day.
type subscriptionRow struct {
	hubapi.Subscription
	Last24h hubapi.SubscriptionDeliveryCounts
}

func (h *Handler) home(req *request) error {
	if req.caller.Kind == hubapi.CallerAdmin {
		return h.console(req)
	}
	ctx := req.r.Context()
	page, err := req.hub.ListSubscriptions(ctx, "", hubapi.ListParams{Limit: pageSize, Cursor: req.r.URL.Query().Get("cursor")})
	if err != nil {
		return err
	}
	rows := make([]subscriptionRow, len(page.Items))
	ids := make([]string, len(page.Items))
	for i, sub := range page.Items {
		rows[i].Subscription, ids[i] = sub, sub.ID
	}
	if len(ids) > 0 {
		// One call for the page (pageSize is within what one counts).
		counts, err := req.hub.CountDeliveries(ctx, "", ids)
		if err != nil {
			return err
		}
		for i := range rows {
			rows[i].Last24h = counts.Items[i]
		}
	}
	return h.render(req, "subscriptions", subscriptionsPage{Items: rows, Next: nextLink(req.r.URL, page.NextCursor)})
}

// nextLink is the URL of the page after this one, "" when there is none:
// this page's query with the cursor replaced.
func nextLink(current *url.URL, cursor *string) string {
	if cursor == nil {
		return ""
	}
	q := current.Query()
	q.Set("cursor", *cursor)
	return current.Path + "?" + q.Encode()
}

type createdPage struct {
	Subscription hubapi.Subscription
	Secret       string
	Rotated      bool
}

// splitList reads items written one per line or comma-separated. None is
// an empty list, not nil, so an update sends it and the hub refuses it
// with its own message rather than keeping the old list.
func splitList(text string) []string {
	items := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' || r == ' ' })
	if items == nil {
		return []string{}
	}
	return items
}

type subscriptionPage struct {
	Subscription hubapi.Subscription
	Health       Health
	// Chart is the last day's outcomes per hour, Summary its sentence.
	Chart   template.HTML
	Summary string
	// Sampled says the chart shows only the latest chartSample
	// deliveries, the subscription having more in the day.
	Sampled bool
	// Latency is the last day's attempt durations per hour, LatencyChart
	// its drawing and LatencySummary its sentence.
	Latency        hubapi.AttemptLatency
	LatencyChart   template.HTML
	LatencySummary string
	// Trial is the edit form's filter tried on recent events, nil until
	// asked for.
	Trial *FilterTrial
	// Sink is the sink's settings, credentials masked as the API shows
	// them.
	Sink []sinkRow
	// Form is the edit form, filled.
	Form *subscriptionForm
	// Activity is the latest operational events about the subscription.
	Activity []activityRow
}

// filterTest shows the subscription with the edit form's filter tried on
// the tenant's latest events. It changes nothing, so it is a GET any
// session may make.
func (h *Handler) filterTest(req *request) error {
	if err := tenantOnly(req); err != nil {
		return err
	}
	ctx, q := req.r.Context(), req.r.URL.Query()
	sub, err := req.hub.GetSubscription(ctx, "", req.r.PathValue("id"))
	if err != nil {
		return err
	}
	trial, err := tryFilter(ctx, req.hub, q.Get("filter"), q.Get("event_types"))
	if err != nil {
		return err
	}
	page, err := h.subscriptionPage(req, sub)
	if err != nil {
		return err
	}
	page.Trial = &trial
	return h.render(req, "subscription", page)
}

func (h *Handler) subscription(req *request) error {
	if err := tenantOnly(req); err != nil {
		return err
	}
	sub, err := req.hub.GetSubscription(req.r.Context(), "", req.r.PathValue("id"))
	if err != nil {
		return err
	}
	page, err := h.subscriptionPage(req, sub)
	if err != nil {
		return err
	}
	return h.render(req, "subscription", page)
}

// subscriptionPage is the subscription with its health and its last day.
func (h *Handler) subscriptionPage(req *request, sub hubapi.Subscription) (subscriptionPage, error) {
	recent, err := req.hub.ListDeliveries(req.r.Context(), "", sub.ID, hubapi.DeliveryListParams{ListParams: hubapi.ListParams{Limit: chartSample}})
	if err != nil {
		return subscriptionPage{}, err
	}
	t, err := storedSinkType(sub)
	if err != nil {
		return subscriptionPage{}, err
	}
	activity, _, err := listActivity(req, sub.ID, subscriptionActivity, "")
	if err != nil {
		return subscriptionPage{}, err
	}
	latency, err := req.hub.AttemptLatency(req.r.Context(), "", sub.ID)
	if err != nil {
		return subscriptionPage{}, err
	}
	buckets := Outcomes(recent.Items, h.opts.Now(), chartHours)
	form := newForm(t, editValues(t, sub), sub.Sink, nil)
	return subscriptionPage{Subscription: sub, Health: HealthOf(sub), Chart: OutcomeChart(buckets),
		Summary: Summary(buckets), Sampled: recent.NextCursor != nil,
		Latency: latency, LatencyChart: LatencyChart(latency), LatencySummary: LatencySummary(latency), Sink: sinkRows(t.Name, sub.Sink),
		Form: &form, Activity: activity}, nil
}

// subscriptionAction runs one of the buttons of a subscription's page.
// A read-only session is refused by the hub itself, whatever it posts.
func (h *Handler) subscriptionAction(req *request) error {
	if err := tenantOnly(req); err != nil {
		return err
	}
	ctx, id := req.r.Context(), req.r.PathValue("id")
	back := "/portal/subscriptions/" + url.PathEscape(id)
	var err error
	switch req.r.PathValue("action") {
	case "enable":
		_, err = req.hub.EnableSubscription(ctx, "", id)
	case "disable":
		_, err = req.hub.DisableSubscription(ctx, "", id)
	case "verify":
		_, err = req.hub.VerifySubscription(ctx, "", id)
	case "edit":
		return h.edit(req, id)
	case "recover":
		return h.recover(req, id)
	case "rotate-secret":
		rotation, err := req.hub.RotateSecret(ctx, "", id, "")
		if err != nil {
			return err
		}
		sub, err := req.hub.GetSubscription(ctx, "", id)
		if err != nil {
			return err
		}
		return h.render(req, "secret", createdPage{Subscription: sub, Secret: rotation.SigningSecret, Rotated: true})
	case "delete":
		sub, err := req.hub.GetSubscription(ctx, "", id)
		if err != nil {
			return err
		}
		if req.r.PostFormValue("confirm") != sub.Name {
			return &hubapi.ValidationError{Field: "confirm", Code: hubapi.CodeInvalidRequest,
				Message: fmt.Sprintf("To delete the subscription, type its name, %q, exactly.", sub.Name)}
		}
		if _, err := req.hub.DeleteSubscription(ctx, "", id); err != nil {
			return err
		}
		back = "/portal/"
	default:
		return &hubapi.NotFoundError{Code: "not_found", Message: "There is no such action."}
	}
	if err != nil {
		return err
	}
	http.Redirect(req.w, req.r, back, http.StatusSeeOther)
	return nil
}

// deliveryStates are the states a delivery list filters on.
var deliveryStates = []string{"pending", "in_flight", "succeeded", "dead", "canceled"}

type deliveriesPage struct {
	Subscription hubapi.Subscription
	Items        []hubapi.Delivery
	State        string
	States       []string
	// Since and Until are the window as typed (a duration back from now or
	// an RFC 3339 time); Problem says why the hub or the form refused it,
	// on Field.
	Since, Until         string
	Problem, Field, Code string
	Next                 string
}

func (h *Handler) deliveries(req *request) error {
	if err := tenantOnly(req); err != nil {
		return err
	}
	ctx, id, q := req.r.Context(), req.r.PathValue("id"), req.r.URL.Query()
	sub, err := req.hub.GetSubscription(ctx, "", id)
	if err != nil {
		return err
	}
	page := deliveriesPage{Subscription: sub, State: q.Get("state"), States: deliveryStates, Since: q.Get("since"), Until: q.Get("until")}
	params := hubapi.DeliveryListParams{ListParams: hubapi.ListParams{Limit: pageSize, Cursor: q.Get("cursor")}, State: page.State}
	if params.Since, params.Until, err = deliveryWindow(page.Since, page.Until, h.opts.Now()); err == nil {
		var list hubapi.Page[hubapi.Delivery]
		if list, err = req.hub.ListDeliveries(ctx, "", id, params); err == nil {
			page.Items = list.Items
			// The next page repeats the window as the times it meant, so
			// a duration does not slide while the pages are read.
			next := *req.r.URL
			query := next.Query()
			setOrDelete(query, "since", params.Since)
			setOrDelete(query, "until", params.Until)
			next.RawQuery = query.Encode()
			page.Next = nextLink(&next, list.NextCursor)
			return h.render(req, "deliveries", page)
		}
	}
	var invalid *hubapi.ValidationError
	if !errors.As(err, &invalid) {
		return err
	}
	page.Problem, page.Field, page.Code = invalid.Message, invalid.Field, invalid.Code
	return h.renderCode(req, http.StatusBadRequest, "deliveries", page)
}

// deliveryWindow reads the deliveries form's window, each side a duration
// back from now or an RFC 3339 time, into the times the hub takes; "" leaves
// a side open.
func deliveryWindow(since, until string, now time.Time) (sinceAt, untilAt string, err error) {
	for _, bound := range []struct {
		field, value string
		at           *string
	}{{"since", since, &sinceAt}, {"until", until, &untilAt}} {
		if bound.value == "" {
			continue
		}
		t, err := when.Parse(bound.value, now)
		if err != nil {
			return "", "", &hubapi.ValidationError{Field: bound.field, Code: hubapi.CodeInvalidRequest, Message: fmt.Sprintf("%s %q: %v", bound.field, bound.value, err)}
		}
		*bound.at = when.Format(t)
	}
	return sinceAt, untilAt, nil
}

func setOrDelete(q url.Values, name, value string) {
	if value == "" {
		q.Del(name)
		return
	}
	q.Set(name, value)
}

func (h *Handler) delivery(req *request) error {
	if err := tenantOnly(req); err != nil {
		return err
	}
	d, err := req.hub.GetDelivery(req.r.Context(), "", req.r.PathValue("id"))
	if err != nil {
		return err
	}
	return h.render(req, "delivery", d)
}

type deadLettersPage struct {
	Items          []hubapi.DeadLetter
	SubscriptionID string
	Next           string
}

func (h *Handler) deadLetters(req *request) error {
	if err := tenantOnly(req); err != nil {
		return err
	}
	q := req.r.URL.Query()
	filter := hubapi.DeadLetterFilter{SubscriptionID: q.Get("subscription")}
	page, err := req.hub.ListDeadLetters(req.r.Context(), "", hubapi.DeadLetterListParams{
		ListParams: hubapi.ListParams{Limit: pageSize, Cursor: q.Get("cursor")}, DeadLetterFilter: filter})
	if err != nil {
		return err
	}
	return h.render(req, "dead-letters", deadLettersPage{Items: page.Items, SubscriptionID: filter.SubscriptionID,
		Next: nextLink(req.r.URL, page.NextCursor)})
}

type replayPage struct {
	Result         hubapi.DeadLetterReplayResult
	SubscriptionID string
}

// replay counts first: a dry run answers how many dead letters the replay
// would send again, with the button that does it.
func (h *Handler) replay(req *request) error {
	if err := tenantOnly(req); err != nil {
		return err
	}
	sub := req.r.PostFormValue("subscription")
	res, err := req.hub.ReplayDeadLetters(req.r.Context(), "", hubapi.DeadLetterReplay{
		SubscriptionID: sub, DryRun: req.r.PostFormValue("dry_run") != "false"})
	if err != nil {
		return err
	}
	return h.render(req, "replay", replayPage{Result: res, SubscriptionID: sub})
}

type eventsPage struct {
	Items []hubapi.InboxEvent
	Type  string
	Next  string
}

func (h *Handler) events(req *request) error {
	if err := tenantOnly(req); err != nil {
		return err
	}
	q := req.r.URL.Query()
	page, err := req.hub.ListEvents(req.r.Context(), "", hubapi.EventListParams{
		ListParams: hubapi.ListParams{Limit: pageSize, Cursor: q.Get("cursor")}, EventFilter: hubapi.EventFilter{Type: q.Get("type")}})
	if err != nil {
		return err
	}
	return h.render(req, "events", eventsPage{Items: page.Items, Type: q.Get("type"), Next: nextLink(req.r.URL, page.NextCursor)})
}

func (h *Handler) event(req *request) error {
	if err := tenantOnly(req); err != nil {
		return err
	}
	e, err := req.hub.GetEvent(req.r.Context(), "", req.r.PathValue("id"))
	if err != nil {
		return err
	}
	return h.render(req, "event", e)
}

type recoverPage struct {
	Subscription hubapi.Subscription
	Since        string
	Result       hubapi.SubscriptionRecoverResult
	// Progress is set when the page is streamed because the recover runs
	// long: it yields how much of the range is read, in per cent, until
	// the recover ends; then Result, or Problem, says how it ended.
	Progress <-chan int64
	Problem  string
}

// recover sends again what the subscription missed since a time, counted
// first: a dry run answers how many events would be queued, with the
// button that queues them. Both read every event of the range, a batch
// at a time; one that runs longer than RecoverStreamAfter is answered as
// it goes, its progress streamed into the page (no script needed), so a
// long range shows it is moving and outlives the listener's write timeout.
func (h *Handler) recover(req *request, id string) error {
	ctx := req.r.Context()
	since, err := sinceValue(req.r.PostFormValue("since"))
	if err != nil {
		return err
	}
	sub, err := req.hub.GetSubscription(ctx, "", id)
	if err != nil {
		return err
	}
	in := hubapi.SubscriptionRecover{Since: since, DryRun: req.r.PostFormValue("dry_run") != "false"}
	page := &recoverPage{Subscription: sub, Since: since}
	progress := make(chan int64, 1)
	var recoverErr error
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		page.Result, recoverErr = req.hub.RecoverSubscription(ctx, "", id, in, func(done, total int64) {
			latest(progress, percentOf(done, total))
		})
	}()
	wait := time.NewTimer(h.opts.RecoverStreamAfter)
	defer wait.Stop()
	select {
	case <-finished:
		if recoverErr != nil {
			return recoverErr
		}
		return h.render(req, "recover", page)
	case <-wait.C:
	}
	// From here the page is on its way: what ends the recover is said in
	// it. Progress closes once the recover has ended, so the template's
	// range over it ends with Result and Problem set.
	steps := make(chan int64)
	page.Progress = steps
	go func() {
		defer close(steps)
		for {
			select {
			case p := <-progress:
				steps <- p
			case <-finished:
				select { // the last report, if the recover ended before it was taken
				case p := <-progress:
					steps <- p
				default:
				}
				if recoverErr != nil {
					page.Problem = h.messageOf(req.r, recoverErr)
				}
				return
			}
		}
	}()
	h.stream(req, "recover", page)
	for range steps { // a page cut short leaves progress nobody reads
	}
	return nil
}

// latest hands v over, replacing a value not yet taken: a reader that
// falls behind sees the newest progress, and the recover never waits.
func latest(ch chan int64, v int64) {
	for {
		select {
		case ch <- v:
			return
		default:
			select {
			case <-ch:
			default:
			}
		}
	}
}

func percentOf(done, total int64) int64 {
	if total <= 0 {
		return 100
	}
	return min(100, done*100/total)
}

// sinceValue reads the recover form's time: RFC 3339, or what a
// datetime-local field sends (2026-03-01T12:00), taken as UTC.
func sinceValue(text string) (string, error) {
	text = strings.TrimSpace(text)
	if _, err := time.Parse(time.RFC3339, text); err == nil {
		return text, nil
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, text); err == nil {
			return t.UTC().Format(time.RFC3339), nil
		}
	}
	return "", &hubapi.ValidationError{Field: "since", Code: hubapi.CodeInvalidRequest,
		Message: fmt.Sprintf("%q is not a time: give one such as 2026-03-01T12:00 (UTC)", text)}
}
