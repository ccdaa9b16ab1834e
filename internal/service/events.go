package service

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/match"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// CodeEventNotFound answers an event that is missing or another tenant's.
const CodeEventNotFound = "event_not_found"

// maxFilterLength bounds a text filter of the inbox search: longer than
// any stored attribute could be, short enough to refuse junk early.
const maxFilterLength = 1024

// eventsCursor names the inbox listing's cursors; a position is the last
// event's seq.
const eventsCursor = "events"

// ListEvents searches the tenant's inbox, newest first: what support
// starts from when all a customer has is a type, a source or a time.
func (s *Deliveries) ListEvents(ctx context.Context, tenantID string, p hubapi.EventListParams) (hubapi.Page[hubapi.InboxEvent], error) {
	q, err := checkEventList(tenantID, p)
	if err != nil {
		return hubapi.Page[hubapi.InboxEvent]{}, err
	}
	rows, more, err := s.store.ListInboxEvents(ctx, q)
	if err != nil {
		return hubapi.Page[hubapi.InboxEvent]{}, err
	}
	return pageOf(rows, more, inboxEventView, eventsCursor, func(last catalog.InboxEvent) string {
		return strconv.FormatInt(last.Seq, 10)
	}), nil
}

// GetEvent reads one stored event by its CloudEvents id, with its headers
// and payload, and what became of it for every subscription that matched
// it: a push delivery with each attempt, or a pull entry.
func (s *Deliveries) GetEvent(ctx context.Context, tenantID, id string) (hubapi.EventDetail, error) {
	eventID, err := uuid.Parse(id)
	if err != nil || hubapi.CheckTenantID(tenantID) != nil {
		return hubapi.EventDetail{}, eventError(id, pg.ErrNotFound)
	}
	row, err := s.store.GetInboxEvent(ctx, tenantID, eventID)
	if err != nil {
		return hubapi.EventDetail{}, eventError(id, err)
	}
	deliveries, err := s.store.EventDeliveries(ctx, tenantID, row.Seq)
	if err != nil {
		return hubapi.EventDetail{}, err
	}
	detail := hubapi.EventDetail{InboxEvent: inboxEventView(row), Deliveries: make([]hubapi.EventDelivery, len(deliveries))}
	detail.Headers = make([]hubapi.QuarantineHeader, len(row.Headers))
	for i, h := range row.Headers {
		detail.Headers[i] = headerView(h)
	}
	detail.Payload, detail.PayloadEncoding = PullPayload(row.DataContentType, row.Payload)
	for i, d := range deliveries {
		v := hubapi.EventDelivery{SubscriptionID: d.SubscriptionID.String(), SubscriptionName: d.SubscriptionName, SinkType: d.SinkType, Pulled: d.Pulled}
		if d.Job != nil {
			v.Delivery = deliveryDetailView(*d.Job, d.Attempts)
		}
		detail.Deliveries[i] = v
	}
	return detail, nil
}

func checkEventList(tenantID string, p hubapi.EventListParams) (catalog.InboxQuery, error) {
	limit, err := pageLimit(p.Limit)
	if err != nil {
		return catalog.InboxQuery{}, err
	}
	if err := hubapi.CheckTenantID(tenantID); err != nil {
		return catalog.InboxQuery{}, err
	}
	q := catalog.InboxQuery{TenantID: tenantID, Key: p.Type, Source: p.Source, Subject: p.Subject, Limit: limit}
	for _, f := range []struct{ name, value string }{{"type", p.Type}, {"source", p.Source}, {"subject", p.Subject}} {
		if len(f.value) > maxFilterLength {
			return catalog.InboxQuery{}, invalid(f.name, "%s is longer than %d bytes: no stored event has one that long", f.name, maxFilterLength)
		}
	}
	// A type may be a pattern as event_types take them: "hub.*" is the
	// tenant's activity (docs/operational-events.md), "*" every type.
	if prefix, ok := strings.CutSuffix(p.Type, "*"); ok {
		if err := match.ValidatePattern(p.Type); err != nil {
			return catalog.InboxQuery{}, invalid("type", "invalid type %q: an event key, or a pattern such as hub.* or *", p.Type)
		}
		q.Key, q.KeyPrefix = "", prefix
	}
	if q.Since, err = parseBound("since", p.Since); err != nil {
		return catalog.InboxQuery{}, err
	}
	if q.Until, err = parseBound("until", p.Until); err != nil {
		return catalog.InboxQuery{}, err
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return catalog.InboxQuery{}, invalid("until", "until (%s) must be after since (%s)", p.Until, p.Since)
	}
	if p.Cursor != "" {
		position, err := decodeCursor(eventsCursor, p.Cursor)
		if err != nil {
			return catalog.InboxQuery{}, err
		}
		if q.BeforeSeq, err = strconv.ParseInt(position, 10, 64); err != nil || q.BeforeSeq < 1 {
			return catalog.InboxQuery{}, errBadCursor()
		}
	}
	return q, nil
}

// eventError turns the store's ErrNotFound about one event into the
// service's error; other errors pass through unchanged.
func eventError(id string, err error) error {
	if errors.Is(err, pg.ErrNotFound) {
		return &hubapi.NotFoundError{Code: CodeEventNotFound, Message: fmt.Sprintf("event %q not found", id), Err: err}
	}
	return err
}

func inboxEventView(e catalog.InboxEvent) hubapi.InboxEvent {
	return hubapi.InboxEvent{
		ID:              e.ID.String(),
		Seq:             e.Seq,
		Type:            e.Key,
		CEType:          e.Type,
		Source:          e.Source,
		Subject:         e.Subject,
		TenantID:        e.TenantID,
		SchemaVersion:   e.SchemaVersion,
		DataContentType: e.DataContentType,
		DataSchema:      e.DataSchema,
		TraceParent:     e.TraceParent,
		TraceState:      e.TraceState,
		Time:            e.Time.UTC(),
		ReceivedAt:      e.ReceivedAt.UTC(),
		Topic:           e.Topic,
		Partition:       e.Partition,
		Offset:          e.Offset,
		SizeBytes:       e.Size,
	}
}

// headerView shows a record header as text where it is valid UTF-8, else
// base64, like a quarantined record's.
func headerView(h catalog.RawHeader) hubapi.QuarantineHeader {
	var v hubapi.QuarantineHeader
	v.Key, v.KeyEncoding = textOrBase64(h.Key)
	v.Value, v.Encoding = textOrBase64(h.Value)
	return v
}
