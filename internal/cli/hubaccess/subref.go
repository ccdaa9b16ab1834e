package hubaccess

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// ResolveSubscription turns what a user typed for a subscription into its
// id: a UUID is taken as it is, anything else is looked up as a name among
// the tenant's subscriptions. Names are not unique, so a name two
// subscriptions share is a usage error (exit 2) naming their ids, to pick
// one; a name none has is not found (exit 3).
func ResolveSubscription(ctx context.Context, h hubapi.ControlPlane, tenant, ref string) (string, error) {
	if _, err := uuid.Parse(ref); err == nil {
		return ref, nil
	}
	ids, err := SubscriptionsNamed(ctx, h, tenant, ref)
	if err != nil {
		return "", err
	}
	switch len(ids) {
	case 0:
		return "", cmdutil.WithCode(cmdutil.ExitNotFound, fmt.Errorf("subscription %q not found%s (not an id, and no subscription has that name)", ref, InTenant(tenant)))
	case 1:
		return ids[0], nil
	default:
		return "", cmdutil.UsageErrorf("%d subscriptions%s are named %q: give one of their ids: %s", len(ids), InTenant(tenant), ref, strings.Join(ids, ", "))
	}
}

// InTenant is ` in tenant "acme"` for a message about a tenant's
// resources, or nothing when tenant is "": with a tenant API key the CLI
// does not know its tenant's name, and `tenant ""` reads as a tenant with
// an empty name.
func InTenant(tenant string) string {
	if tenant == "" {
		return ""
	}
	return fmt.Sprintf(" in tenant %q", tenant)
}

// SubscriptionsNamed lists the ids of the tenant's live subscriptions
// named name, reading every page.
func SubscriptionsNamed(ctx context.Context, h hubapi.ControlPlane, tenant, name string) ([]string, error) {
	var ids []string
	p := hubapi.ListParams{Limit: hubapi.MaxPageLimit}
	for {
		page, err := h.ListSubscriptions(ctx, tenant, p)
		if err != nil {
			return nil, err
		}
		for _, s := range page.Items {
			if s.Name == name {
				ids = append(ids, s.ID)
			}
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return ids, nil
		}
		p.Cursor = *page.NextCursor
	}
}

// CallForSubscription is CallForTenant for a use case on one subscription,
// which ref names by id or by its name (ResolveSubscription).
func CallForSubscription[T any](ctx context.Context, f *cmdutil.Factory, ref string, do func(h hubapi.ControlPlane, tenant, id string) (T, error)) (T, error) {
	return CallForTenant(ctx, f, func(h hubapi.ControlPlane, tenant string) (T, error) {
		id, err := ResolveSubscription(ctx, h, tenant, ref)
		if err != nil {
			var zero T
			return zero, err
		}
		return do(h, tenant, id)
	})
}

// ResolveSubscriptionFlag is ResolveSubscription for a flag that names a
// subscription (a filter such as --subscription): "" selects every
// subscription and stays "", and a failure names the flag.
func ResolveSubscriptionFlag(ctx context.Context, h hubapi.ControlPlane, tenant, flag, ref string) (string, error) {
	if ref == "" {
		return "", nil
	}
	id, err := ResolveSubscription(ctx, h, tenant, ref)
	if err != nil {
		return "", fmt.Errorf("--%s: %w", flag, err)
	}
	return id, nil
}
