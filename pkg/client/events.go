package client

import (
	"context"
	"net/http"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// EventListOptions search the tenant's inbox, newest first. Every filter
// is optional: Type (the exact event key), Source, Subject, and Since
// (inclusive) / Until (exclusive) on received_at in RFC 3339.
type EventListOptions struct {
	ListOptions
	Type, Source, Subject string
	Since, Until          string
}

// ListEvents pages through the tenant's stored events: GET /v1/inbox.
func (c *Client) ListEvents(ctx context.Context, opts EventListOptions) (hubapi.Page[hubapi.InboxEvent], error) {
	var out hubapi.Page[hubapi.InboxEvent]
	q := opts.query()
	setIfNotEmpty(q, "type", opts.Type)
	setIfNotEmpty(q, "source", opts.Source)
	setIfNotEmpty(q, "subject", opts.Subject)
	setIfNotEmpty(q, "since", opts.Since)
	setIfNotEmpty(q, "until", opts.Until)
	err := c.call(ctx, http.MethodGet, "/v1/inbox", q, nil, &out)
	return out, err
}

// GetEvent reads one stored event by its CloudEvents id, with its payload
// and every subscription's delivery of it: GET /v1/inbox/{id}. Another
// tenant's event answers 404 event_not_found, like a missing one.
func (c *Client) GetEvent(ctx context.Context, id string) (hubapi.EventDetail, error) {
	var out hubapi.EventDetail
	escaped, err := segment("event id", id)
	if err != nil {
		return out, err
	}
	err = c.call(ctx, http.MethodGet, "/v1/inbox/"+escaped, nil, nil, &out)
	return out, err
}
