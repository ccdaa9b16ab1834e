package service

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Pull reads pull subscriptions' streams, where reading is the ack: a read
// that returns events advances the subscription's durable cursor in the same
// transaction. Every read is scoped to one tenant.
type Pull struct {
	store *queue.Store
}

// NewPull returns the pull use case over st.
func NewPull(st *queue.Store) *Pull {
	return &Pull{store: st}
}

// Read returns the subscription's events after its cursor (or after
// p.After), ascending by seq, at most p.Limit of them. next_cursor is the
// last seq returned when the page is full, and null when it is short: the
// subscription has nothing more right now.
func (s *Pull) Read(ctx context.Context, tenantID, subscriptionID string, p hubapi.PullParams) (hubapi.PullPage, error) {
	limit, err := pageLimit(p.Limit)
	if err != nil {
		return hubapi.PullPage{}, err
	}
	if p.After != nil && *p.After < 0 {
		return hubapi.PullPage{}, invalid("after", "invalid after %d: must be a seq, an integer of 0 or more", *p.After)
	}
	subID, err := uuid.Parse(subscriptionID)
	if err != nil || hubapi.CheckTenantID(tenantID) != nil {
		return hubapi.PullPage{}, pullError(subscriptionID, pg.ErrNotFound)
	}
	res, err := s.store.ReadPull(ctx, queue.PullQuery{TenantID: tenantID, SubscriptionID: subID, Limit: limit, After: p.After})
	if err != nil {
		return hubapi.PullPage{}, pullError(subscriptionID, err)
	}
	page := hubapi.PullPage{Items: make([]hubapi.PullEvent, len(res.Events)), NextCursor: NextPullCursor(seqs(res.Events), limit),
		EventsExpired: res.EventsExpired}
	for i, e := range res.Events {
		page.Items[i] = pullEventView(e)
	}
	return page, nil
}

func seqs(events []queue.PulledEvent) []int64 {
	out := make([]int64, len(events))
	for i, e := range events {
		out[i] = e.Seq
	}
	return out
}

// NextPullCursor is a page's next_cursor (docs/consuming.md, Pulling events): the largest seq it
// returned, or nil when it is short, holding fewer than limit events.
func NextPullCursor(seqs []int64, limit int) *int64 {
	if len(seqs) == 0 || len(seqs) < limit {
		return nil
	}
	last := seqs[len(seqs)-1]
	return &last
}

// pullError turns the store's answers about the subscription into the
// service's errors: missing (or another tenant's, or deleted) is
// subscription_not_found, a push subscription not_a_pull_subscription.
func pullError(id string, err error) error {
	if errors.Is(err, queue.ErrNotPull) {
		return &hubapi.ConflictError{Code: CodeNotAPullSubscription,
			Message: fmt.Sprintf("subscription %q is not a pull subscription: its events are pushed to its sink, not read here", id), Err: err}
	}
	return subscriptionError(id, err)
}

func pullEventView(e queue.PulledEvent) hubapi.PullEvent {
	v := hubapi.PullEvent{
		Seq:             e.Seq,
		CEID:            e.ID,
		Type:            e.Key,
		CEType:          e.Type,
		Source:          e.Source,
		TenantID:        e.TenantID,
		SchemaVersion:   e.SchemaVersion,
		Subject:         e.Subject,
		Time:            e.Time.UTC(),
		ReceivedAt:      e.ReceivedAt.UTC(),
		DataContentType: e.DataContentType,
	}
	v.Payload, v.PayloadEncoding = PullPayload(e.DataContentType, e.Payload)
	return v
}

// PullPayload is how an event's data travels in a pull item: the JSON
// itself when the content type says JSON and the data is JSON a consumer can
// parse (valid, and UTF-8 as RFC 8259 requires), else a JSON string of the
// data in standard base64 with encoding "base64". An absent content type
// counts as JSON, as in CloudEvents' JSON format and the webhook sink, which
// sends such data as application/json; the validity check keeps anything
// else from breaking the answer.
func PullPayload(contentType string, data []byte) (payload json.RawMessage, encoding string) {
	if (contentType == "" || IsJSONContentType(contentType)) && json.Valid(data) && utf8.Valid(data) {
		return json.RawMessage(data), ""
	}
	encoded := make([]byte, 0, base64.StdEncoding.EncodedLen(len(data))+2)
	encoded = append(encoded, '"')
	encoded = base64.StdEncoding.AppendEncode(encoded, data)
	encoded = append(encoded, '"')
	return encoded, hubapi.EncodingBase64
}

// IsJSONContentType reports whether a media type carries JSON:
// application/json or a structured +json type such as
// application/cloudevents+json, with or without parameters.
func IsJSONContentType(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mediaType == "application/json" || strings.HasSuffix(mediaType, "+json"))
}
