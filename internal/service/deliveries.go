package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Deliveries reads delivery jobs and their attempts (docs/concepts.md, Dispatch). Every
// method is scoped to one tenant: another tenant's subscription or delivery
// answers exactly like a missing one. Reading needs no key-encryption key:
// nothing here is sealed.
type Deliveries struct {
	store *catalog.Store
}

// NewDeliveries returns the delivery use cases over st.
func NewDeliveries(st *catalog.Store) *Deliveries {
	return &Deliveries{store: st}
}

// List pages through a subscription's deliveries, newest event first. A
// deleted subscription's deliveries stay listed: they are its history.
func (s *Deliveries) List(ctx context.Context, tenantID, subscriptionID string, p hubapi.DeliveryListParams) (hubapi.Page[hubapi.Delivery], error) {
	q, err := checkDeliveryList(p)
	if err != nil {
		return hubapi.Page[hubapi.Delivery]{}, err
	}
	subID, err := uuid.Parse(subscriptionID)
	if err != nil || hubapi.CheckTenantID(tenantID) != nil {
		return hubapi.Page[hubapi.Delivery]{}, subscriptionError(subscriptionID, pg.ErrNotFound)
	}
	q.TenantID, q.SubscriptionID = tenantID, subID
	rows, more, err := s.store.ListDeliveries(ctx, q)
	if err != nil {
		return hubapi.Page[hubapi.Delivery]{}, subscriptionError(subscriptionID, err)
	}
	return pageOf(rows, more, deliveryView, deliveriesCursor, func(last catalog.Delivery) string {
		return strconv.FormatInt(last.EventSeq, 10)
	}), nil
}

// Get reads one delivery with its attempts, oldest first. id is the
// delivery's own id or the id of one of its attempts: the
// X-Lerian-Delivery-Id a receiver saw is all a customer can quote.
func (s *Deliveries) Get(ctx context.Context, tenantID, id string) (hubapi.DeliveryDetail, error) {
	jobID, err := uuid.Parse(id)
	if err != nil || hubapi.CheckTenantID(tenantID) != nil {
		return hubapi.DeliveryDetail{}, deliveryError(id, pg.ErrNotFound)
	}
	row, attempts, err := s.store.GetDelivery(ctx, tenantID, jobID)
	if errors.Is(err, pg.ErrNotFound) {
		// Not a delivery id: perhaps an attempt's.
		var lookupErr error
		if jobID, lookupErr = s.store.JobOfAttempt(ctx, tenantID, jobID); lookupErr == nil {
			row, attempts, err = s.store.GetDelivery(ctx, tenantID, jobID)
		} else if !errors.Is(lookupErr, pg.ErrNotFound) {
			err = lookupErr
		}
	}
	if err != nil {
		return hubapi.DeliveryDetail{}, deliveryError(id, err)
	}
	return *deliveryDetailView(row, attempts), nil
}

// Count counts the deliveries of the last day of each subscription named,
// in the order named: the ones created since, among its latest
// hubapi.DeliveryCountsSample. A subscription the tenant does not own
// answers exactly like a missing one; a deleted one still counts its
// history.
func (s *Deliveries) Count(ctx context.Context, tenantID string, subscriptionIDs []string) (hubapi.DeliveryCounts, error) {
	ids, err := checkCountedSubscriptions(subscriptionIDs)
	if err != nil {
		return hubapi.DeliveryCounts{}, err
	}
	if hubapi.CheckTenantID(tenantID) != nil {
		return hubapi.DeliveryCounts{}, subscriptionError(subscriptionIDs[0], pg.ErrNotFound)
	}
	since := time.Now().Add(-hubapi.DeliveryCountsWindow).UTC()
	rows, err := s.store.CountRecentDeliveries(ctx, tenantID, ids, since, hubapi.DeliveryCountsSample)
	if err != nil {
		return hubapi.DeliveryCounts{}, err
	}
	found := make(map[uuid.UUID]catalog.RecentDeliveryCounts, len(rows))
	for _, r := range rows {
		found[r.SubscriptionID] = r
	}
	out := hubapi.DeliveryCounts{Since: since, Items: make([]hubapi.SubscriptionDeliveryCounts, len(ids))}
	for i, id := range ids {
		r, ok := found[id]
		if !ok {
			return hubapi.DeliveryCounts{}, subscriptionError(subscriptionIDs[i], pg.ErrNotFound)
		}
		out.Items[i] = hubapi.SubscriptionDeliveryCounts{SubscriptionID: id.String(), Delivered: r.Delivered, Failed: r.Failed, Dead: r.Dead, Sampled: r.Sampled}
	}
	return out, nil
}

// Latency is a subscription's attempt durations per hour of the last
// hubapi.LatencyHours, the hour now in last, from the attempts of its latest
// hubapi.DeliveryCountsSample deliveries. A deleted subscription still
// answers: its attempts are history.
func (s *Deliveries) Latency(ctx context.Context, tenantID, subscriptionID string) (hubapi.AttemptLatency, error) {
	subID, err := uuid.Parse(subscriptionID)
	if err != nil || hubapi.CheckTenantID(tenantID) != nil {
		return hubapi.AttemptLatency{}, subscriptionError(subscriptionID, pg.ErrNotFound)
	}
	until := time.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	since := until.Add(-hubapi.LatencyHours * time.Hour)
	rows, sampled, err := s.store.AttemptLatency(ctx, tenantID, subID, since, until, hubapi.DeliveryCountsSample)
	if err != nil {
		return hubapi.AttemptLatency{}, subscriptionError(subscriptionID, err)
	}
	return latencyView(since, rows, sampled), nil
}

// latencyView lays the store's hours with attempts out as every hour of
// the window.
func latencyView(since time.Time, rows []catalog.LatencyHour, sampled bool) hubapi.AttemptLatency {
	out := hubapi.AttemptLatency{Since: since, Sampled: sampled, Hours: make([]hubapi.LatencyHour, hubapi.LatencyHours)}
	for i := range out.Hours {
		out.Hours[i].Start = since.Add(time.Duration(i) * time.Hour)
	}
	for _, r := range rows {
		if r.Hour < 0 || r.Hour >= hubapi.LatencyHours {
			continue
		}
		p50, p95 := r.P50.Milliseconds(), r.P95.Milliseconds()
		h := &out.Hours[r.Hour]
		h.Attempts, h.P50MS, h.P95MS = r.Attempts, &p50, &p95
	}
	return out
}

// checkCountedSubscriptions reads the ids of a count before any I/O: at
// least one, at most hubapi.MaxDeliveryCountsSubscriptions, each named
// once. An id that is not a UUID names no subscription: not found.
func checkCountedSubscriptions(subscriptionIDs []string) ([]uuid.UUID, error) {
	if len(subscriptionIDs) == 0 || len(subscriptionIDs) > hubapi.MaxDeliveryCountsSubscriptions {
		return nil, invalid("subscription_ids", "name 1 to %d subscription ids, comma-separated", hubapi.MaxDeliveryCountsSubscriptions)
	}
	ids := make([]uuid.UUID, len(subscriptionIDs))
	seen := make(map[uuid.UUID]bool, len(subscriptionIDs))
	for i, raw := range subscriptionIDs {
		id, err := uuid.Parse(raw)
		if err != nil {
			return nil, subscriptionError(raw, pg.ErrNotFound)
		}
		if seen[id] {
			return nil, invalid("subscription_ids", "subscription %s is named twice", raw)
		}
		seen[id], ids[i] = true, id
	}
	return ids, nil
}

func deliveryDetailView(row catalog.Delivery, attempts []catalog.DeliveryAttempt) *hubapi.DeliveryDetail {
	detail := &hubapi.DeliveryDetail{Delivery: deliveryView(row), AttemptHistory: make([]hubapi.DeliveryAttempt, len(attempts))}
	for i, a := range attempts {
		detail.AttemptHistory[i] = attemptView(a)
	}
	return detail
}

// checkDeliveryList validates a listing's input before any I/O and turns
// it into the store's query, less the scope.
func checkDeliveryList(p hubapi.DeliveryListParams) (catalog.DeliveryQuery, error) {
	limit, err := pageLimit(p.Limit)
	if err != nil {
		return catalog.DeliveryQuery{}, err
	}
	if p.State != "" && !slices.Contains(hubapi.DeliveryStates, p.State) {
		return catalog.DeliveryQuery{}, invalid("state", "invalid state %q: use one of %s", p.State, strings.Join(hubapi.DeliveryStates, ", "))
	}
	q := catalog.DeliveryQuery{Limit: limit, State: p.State}
	if q.Since, err = parseBound("since", p.Since); err != nil {
		return catalog.DeliveryQuery{}, err
	}
	if q.Until, err = parseBound("until", p.Until); err != nil {
		return catalog.DeliveryQuery{}, err
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return catalog.DeliveryQuery{}, invalid("until", "until (%s) must be after since (%s)", p.Until, p.Since)
	}
	if p.Cursor != "" {
		if q.BeforeSeq, err = parseDeliveriesPosition(p.Cursor); err != nil {
			return catalog.DeliveryQuery{}, err
		}
	}
	return q, nil
}

// deliveryError turns the store's ErrNotFound about one delivery into the
// service's error; other errors pass through unchanged.
func deliveryError(id string, err error) error {
	if errors.Is(err, pg.ErrNotFound) {
		return &hubapi.NotFoundError{Code: CodeDeliveryNotFound, Message: fmt.Sprintf("delivery %q not found", id), Err: err}
	}
	return err
}

func deliveryView(d catalog.Delivery) hubapi.Delivery {
	v := hubapi.Delivery{
		ID:             d.ID.String(),
		SubscriptionID: d.SubscriptionID.String(),
		EventID:        d.EventID,
		EventType:      d.EventKey,
		TenantID:       d.TenantID,
		State:          d.State,
		Attempts:       d.Attempts,
		DeadReason:     optionalText(d.DeadReason),
		LastError:      optionalText(d.LastError),
		LastStatus:     d.LastStatus,
		CreatedAt:      d.CreatedAt.UTC(),
		UpdatedAt:      d.UpdatedAt.UTC(),
		SucceededAt:    utcPtr(d.SucceededAt),
		DeadAt:         utcPtr(d.DeadAt),
	}
	if d.State == hubapi.DeliveryPending {
		v.HeldReason = optionalText(d.ShedReason)
	}
	// next_attempt_at keeps its last value in every state; it is a promise
	// only while the delivery waits for its turn, and none while it is
	// parked behind an earlier delivery of its ordering key.
	if d.State == hubapi.DeliveryPending && d.NextAttemptAt != nil {
		next := d.NextAttemptAt.UTC()
		v.NextAttemptAt = &next
	}
	return v
}

func attemptView(a catalog.DeliveryAttempt) hubapi.DeliveryAttempt {
	v := hubapi.DeliveryAttempt{
		ID:         a.ID.String(),
		Attempt:    a.Number,
		StartedAt:  a.StartedAt.UTC(),
		DurationMS: a.Duration.Milliseconds(),
		Outcome:    a.Outcome,
		StatusCode: a.StatusCode,
		Error:      optionalText(a.Error),
	}
	if a.Response != nil {
		response, encoding := textOrBase64(a.Response)
		v.Response, v.ResponseEncoding = &response, encoding
	}
	return v
}

// optionalText shows "" (the store's NULL) as null.
func optionalText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// deliveriesCursor names the delivery listing's cursors; a position is the
// last delivery's event seq, which orders a subscription's deliveries.
const deliveriesCursor = "deliveries"

func parseDeliveriesPosition(cursor string) (int64, error) {
	position, err := decodeCursor(deliveriesCursor, cursor)
	if err != nil {
		return 0, err
	}
	seq, err := strconv.ParseInt(position, 10, 64)
	if err != nil || seq < 1 {
		return 0, errBadCursor()
	}
	return seq, nil
}
