package service

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// MaxReplayIDs bounds the ids of one replay request, as hubapi.MaxPageLimit bounds
// a page: a client replays a longer list in several requests.
const MaxReplayIDs = hubapi.MaxPageLimit

// ListDeadLetters pages through the tenant's dead letters. Those of a
// deleted subscription are not listed: they can never be replayed.
func (s *Deliveries) ListDeadLetters(ctx context.Context, tenantID string, p hubapi.DeadLetterListParams) (hubapi.Page[hubapi.DeadLetter], error) {
	q, err := checkDeadLetterList(tenantID, p)
	if err != nil {
		return hubapi.Page[hubapi.DeadLetter]{}, err
	}
	rows, more, err := s.store.ListDeadLetters(ctx, q)
	if err != nil {
		return hubapi.Page[hubapi.DeadLetter]{}, err
	}
	return pageOf(rows, more, deadLetterView, deadLettersCursor, func(last catalog.DeadLetter) string {
		return formatDeadLetterPosition(last.DeadAt, last.ID)
	}), nil
}

// ReplayDeadLetters sends the selected dead letters back to pending with a
// fresh attempt budget, keeping their attempt history; with DryRun it only
// counts them. IDs and the filters combine: a job must satisfy all given.
// Replaying is idempotent: a job already replayed is no longer dead, so a
// second replay, even a concurrent one, leaves it alone.
func (s *Deliveries) ReplayDeadLetters(ctx context.Context, tenantID string, in hubapi.DeadLetterReplay) (hubapi.DeadLetterReplayResult, error) {
	f, err := checkDeadLetterReplay(tenantID, in)
	if err != nil {
		return hubapi.DeadLetterReplayResult{}, err
	}
	res, err := s.store.ReplayDeadLetters(ctx, f, time.Now(), in.DryRun)
	if err != nil {
		return hubapi.DeadLetterReplayResult{}, err
	}
	return hubapi.DeadLetterReplayResult{Matched: res.Matched, Replayed: res.Replayed, DryRun: in.DryRun}, nil
}

// checkDeadLetterList validates a listing's input before any I/O and turns
// it into the store's query.
func checkDeadLetterList(tenantID string, p hubapi.DeadLetterListParams) (catalog.DeadLetterQuery, error) {
	limit, err := pageLimit(p.Limit)
	if err != nil {
		return catalog.DeadLetterQuery{}, err
	}
	f, err := checkDeadLetterFilter(tenantID, p.DeadLetterFilter)
	if err != nil {
		return catalog.DeadLetterQuery{}, err
	}
	q := catalog.DeadLetterQuery{DeadLetterFilter: f, Limit: limit}
	if p.Cursor != "" {
		position, err := decodeCursor(deadLettersCursor, p.Cursor)
		if err != nil {
			return catalog.DeadLetterQuery{}, err
		}
		at, id, err := parseDeadLetterPosition(position)
		if err != nil {
			return catalog.DeadLetterQuery{}, err
		}
		q.After = &catalog.DeadLetterPosition{DeadAt: at, ID: id}
	}
	return q, nil
}

// checkDeadLetterReplay validates a replay body before any I/O.
func checkDeadLetterReplay(tenantID string, in hubapi.DeadLetterReplay) (catalog.DeadLetterFilter, error) {
	f, err := checkDeadLetterFilter(tenantID, hubapi.DeadLetterFilter{
		SubscriptionID: in.SubscriptionID, Reason: in.Reason, Since: in.Since, Until: in.Until,
	})
	if err != nil {
		return catalog.DeadLetterFilter{}, err
	}
	if len(in.IDs) > MaxReplayIDs {
		return catalog.DeadLetterFilter{}, invalid("ids", "too many ids (%d): replay at most %d per request", len(in.IDs), MaxReplayIDs)
	}
	// An "ids" given as an empty list would otherwise select everything,
	// the opposite of what a client that filtered down to nothing meant.
	if in.IDs != nil && len(in.IDs) == 0 {
		return catalog.DeadLetterFilter{}, invalid("ids", "ids is empty: leave it out to select by the filters alone")
	}
	for _, id := range in.IDs {
		parsed, err := uuid.Parse(id)
		if err != nil {
			return catalog.DeadLetterFilter{}, invalid("ids", "invalid id %q: dead letter ids are UUIDs", id)
		}
		f.IDs = append(f.IDs, parsed)
	}
	return f, nil
}

func checkDeadLetterFilter(tenantID string, in hubapi.DeadLetterFilter) (catalog.DeadLetterFilter, error) {
	if err := hubapi.CheckTenantID(tenantID); err != nil {
		return catalog.DeadLetterFilter{}, err
	}
	f := catalog.DeadLetterFilter{TenantID: tenantID, Reason: in.Reason}
	if in.SubscriptionID != "" {
		id, err := uuid.Parse(in.SubscriptionID)
		if err != nil {
			return catalog.DeadLetterFilter{}, invalid("subscription_id", "invalid subscription_id %q: subscription ids are UUIDs", in.SubscriptionID)
		}
		f.SubscriptionID = id
	}
	if in.Reason != "" && !slices.Contains(hubapi.DeadReasons, in.Reason) {
		return catalog.DeadLetterFilter{}, invalid("reason", "invalid reason %q: use one of %s", in.Reason, strings.Join(hubapi.DeadReasons, ", "))
	}
	var err error
	if f.Since, err = parseBound("since", in.Since); err != nil {
		return catalog.DeadLetterFilter{}, err
	}
	if f.Until, err = parseBound("until", in.Until); err != nil {
		return catalog.DeadLetterFilter{}, err
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return catalog.DeadLetterFilter{}, invalid("until", "until (%s) must be after since (%s)", in.Until, in.Since)
	}
	return f, nil
}

// parseBound reads an RFC 3339 time; "" is no bound (the zero time).
func parseBound(field, value string) (time.Time, error) {
	if value == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, value)
	if err != nil || t.UnixMicro() < minCursorMicros || t.UnixMicro() >= maxCursorMicros {
		return time.Time{}, invalid(field, "invalid %s %q: use RFC 3339, e.g. 2026-01-02T15:04:05Z", field, value)
	}
	return t, nil
}

func deadLetterView(d catalog.DeadLetter) hubapi.DeadLetter {
	return hubapi.DeadLetter{
		ID:             d.ID.String(),
		SubscriptionID: d.SubscriptionID.String(),
		EventID:        d.EventID,
		EventType:      d.EventKey,
		Reason:         d.Reason,
		Attempts:       d.Attempts,
		LastError:      optionalText(d.LastError),
		LastStatus:     d.LastStatus,
		DeadAt:         d.DeadAt.UTC(),
	}
}

// deadLettersCursor names the dead-letter listing's cursors. A position is
// the last item's dead_at in Unix microseconds (PostgreSQL's precision, so
// it round-trips exactly) and its id: the listing's order.
const deadLettersCursor = "dead-letters"

func formatDeadLetterPosition(at time.Time, id uuid.UUID) string {
	return strconv.FormatInt(at.UnixMicro(), 10) + "." + id.String()
}

func parseDeadLetterPosition(position string) (time.Time, uuid.UUID, error) {
	microsText, idText, ok := strings.Cut(position, ".")
	if !ok {
		return time.Time{}, uuid.Nil, errBadCursor()
	}
	micros, err1 := strconv.ParseInt(microsText, 10, 64)
	id, err2 := uuid.Parse(idText)
	if err1 != nil || err2 != nil || micros < minCursorMicros || micros >= maxCursorMicros {
		return time.Time{}, uuid.Nil, errBadCursor()
	}
	return time.UnixMicro(micros).UTC(), id, nil
}
