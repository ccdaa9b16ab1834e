package hubaccess

import (
	"context"

	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/pkg/client"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// DeadLetters is what `hubctl dlq` does to a tenant's dead letters (docs/concepts.md, Dead letters and poison); tenant is as for the subscription operations of Hub.
type DeadLetters interface {
	ListDeadLetters(ctx context.Context, tenant string, p service.DeadLetterListParams) (hubapi.Page[hubapi.DeadLetter], error)
	ReplayDeadLetters(ctx context.Context, tenant string, in hubapi.DeadLetterReplay) (hubapi.DeadLetterReplayResult, error)
}

func (d *direct) ListDeadLetters(ctx context.Context, tenant string, p service.DeadLetterListParams) (hubapi.Page[hubapi.DeadLetter], error) {
	if err := d.checkTenant(ctx, tenant); err != nil {
		return hubapi.Page[hubapi.DeadLetter]{}, err
	}
	return d.cp.Deliveries.ListDeadLetters(ctx, tenant, p)
}

func (d *direct) ReplayDeadLetters(ctx context.Context, tenant string, in hubapi.DeadLetterReplay) (hubapi.DeadLetterReplayResult, error) {
	if err := d.checkTenant(ctx, tenant); err != nil {
		return hubapi.DeadLetterReplayResult{}, err
	}
	return d.cp.Deliveries.ReplayDeadLetters(ctx, tenant, in)
}

func (r *remote) ListDeadLetters(ctx context.Context, tenant string, p service.DeadLetterListParams) (hubapi.Page[hubapi.DeadLetter], error) {
	page, err := r.tenantClient(tenant).ListDeadLetters(ctx, client.DeadLetterListOptions{
		ListOptions:    listOptions(p.ListParams),
		SubscriptionID: p.SubscriptionID, Reason: p.Reason, Since: p.Since, Until: p.Until,
	})
	return page, scopeError(tenant, err)
}

func (r *remote) ReplayDeadLetters(ctx context.Context, tenant string, in hubapi.DeadLetterReplay) (hubapi.DeadLetterReplayResult, error) {
	result, err := r.tenantClient(tenant).ReplayDeadLetters(ctx, in)
	return result, scopeError(tenant, err)
}
