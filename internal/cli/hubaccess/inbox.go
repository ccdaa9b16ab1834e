package hubaccess

import (
	"context"

	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/pkg/client"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Inbox is the support lookups of a tenant's stored events.
type Inbox interface {
	ListEvents(ctx context.Context, tenant string, p service.EventListParams) (hubapi.Page[hubapi.InboxEvent], error)
	GetEvent(ctx context.Context, tenant, id string) (hubapi.EventDetail, error)
}

func (d *direct) ListEvents(ctx context.Context, tenant string, p service.EventListParams) (hubapi.Page[hubapi.InboxEvent], error) {
	if err := d.checkTenant(ctx, tenant); err != nil {
		return hubapi.Page[hubapi.InboxEvent]{}, err
	}
	return d.cp.Deliveries.ListEvents(ctx, tenant, p)
}

func (d *direct) GetEvent(ctx context.Context, tenant, id string) (hubapi.EventDetail, error) {
	if err := d.checkTenant(ctx, tenant); err != nil {
		return hubapi.EventDetail{}, err
	}
	return d.cp.Deliveries.GetEvent(ctx, tenant, id)
}

func (r *remote) ListEvents(ctx context.Context, tenant string, p service.EventListParams) (hubapi.Page[hubapi.InboxEvent], error) {
	page, err := r.tenantClient(tenant).ListEvents(ctx, client.EventListOptions{
		ListOptions: listOptions(p.ListParams),
		Type:        p.Type, Source: p.Source, Subject: p.Subject, Since: p.Since, Until: p.Until,
	})
	return page, scopeError(tenant, err)
}

func (r *remote) GetEvent(ctx context.Context, tenant, id string) (hubapi.EventDetail, error) {
	detail, err := r.tenantClient(tenant).GetEvent(ctx, id)
	return detail, scopeError(tenant, err)
}
