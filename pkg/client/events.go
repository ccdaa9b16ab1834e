package client

import (
	"context"
	"net/http"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// ListEvents pages through the tenant's stored events, newest first:
// GET /v1/inbox.
func (c *Client) ListEvents(ctx context.Context, tenant string, p hubapi.EventListParams) (hubapi.Page[hubapi.InboxEvent], error) {
	var out hubapi.Page[hubapi.InboxEvent]
	q := pageQuery(p.ListParams)
	setIfNotEmpty(q, "type", p.Type)
	setIfNotEmpty(q, "source", p.Source)
	setIfNotEmpty(q, "subject", p.Subject)
	setIfNotEmpty(q, "since", p.Since)
	setIfNotEmpty(q, "until", p.Until)
	err := c.on(tenant).call(ctx, http.MethodGet, "/v1/inbox", q, nil, &out)
	return out, err
}

// GetEvent reads one stored event by its CloudEvents id, with its payload
// and every subscription's delivery of it: GET /v1/inbox/{id}. Another
// tenant's event answers 404 event_not_found, like a missing one.
func (c *Client) GetEvent(ctx context.Context, tenant, id string) (hubapi.EventDetail, error) {
	var out hubapi.EventDetail
	escaped, err := segment("event id", id)
	if err != nil {
		return out, err
	}
	err = c.on(tenant).call(ctx, http.MethodGet, "/v1/inbox/"+escaped, nil, nil, &out)
	return out, err
}
