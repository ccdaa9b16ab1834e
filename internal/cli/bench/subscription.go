package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/match"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// activeTimeout bounds the wait for the subscription's probe to pass.
const activeTimeout = 30 * time.Second

// subscription creates the bench subscription pointing at target with
// secret, or points the existing one of that name there and rotates it to
// secret. created says which, for the cleanup.
func (b *bencher) subscription(ctx context.Context, target, secret string) (sub hubapi.Subscription, created bool, err error) {
	sink, err := json.Marshal(map[string]string{"type": "webhook", "url": target})
	if err != nil {
		return hubapi.Subscription{}, false, err
	}
	// Only a webhook signs; another sink takes no signing secret.
	var signingSecret *string
	if b.opts.SinkObject != nil {
		sink, secret = b.opts.SinkObject, ""
	} else {
		signingSecret = &secret
	}
	existing, found, err := b.findByName(ctx)
	if err != nil {
		return hubapi.Subscription{}, false, err
	}
	if found {
		enabled := true
		sub, err := b.hub.UpdateSubscription(ctx, b.tenant, existing.ID, hubapi.SubscriptionUpdate{
			Sink: sink, EventTypes: []string{EventKey}, Enabled: &enabled, SigningSecret: signingSecret,
		})
		if err != nil {
			return hubapi.Subscription{}, false, fmt.Errorf("reuse subscription %s (%s): %w", b.opts.Name, existing.ID, err)
		}
		return sub.Subscription, false, nil
	}
	c, err := b.hub.CreateSubscription(ctx, b.tenant, hubapi.SubscriptionCreate{
		Name: b.opts.Name, Sink: sink, EventTypes: []string{EventKey}, SigningSecret: secret,
	})
	if err != nil {
		return hubapi.Subscription{}, false, fmt.Errorf("create subscription %s: %w", b.opts.Name, err)
	}
	if c.SigningSecret != secret {
		// The receiver verifies with the secret the hub returned; any
		// other would refuse every delivery.
		b.deleteSubscription(ctx, c.ID)
		return hubapi.Subscription{}, false, errors.New("the hub returned another signing secret than the one the bench gave")
	}
	return c.Subscription, true, nil
}

// findByName looks for the subscription named --name.
func (b *bencher) findByName(ctx context.Context) (hubapi.Subscription, bool, error) {
	p := hubapi.ListParams{Limit: hubapi.MaxPageLimit}
	for {
		page, err := b.hub.ListSubscriptions(ctx, b.tenant, p)
		if err != nil {
			return hubapi.Subscription{}, false, err
		}
		for _, s := range page.Items {
			if s.Name == b.opts.Name {
				return s, true, nil
			}
		}
		if page.NextCursor == nil {
			return hubapi.Subscription{}, false, nil
		}
		p.Cursor = *page.NextCursor
	}
}

// waitActive probes again until the subscription is active and enabled.
func (b *bencher) waitActive(ctx context.Context, sub *hubapi.Subscription) error {
	deadline := time.Now().Add(activeTimeout)
	for !(sub.VerificationState == match.VerificationActive && sub.Enabled) {
		if time.Now().After(deadline) {
			reason := sub.VerificationError
			if reason == "" {
				reason = "state " + sub.VerificationState
			}
			return cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("subscription %s is not active after %s (%s): can the hub reach the receiver?", sub.ID, activeTimeout, reason))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
		verified, err := b.hub.VerifySubscription(ctx, b.tenant, sub.ID)
		if err == nil {
			*sub = verified
		}
	}
	return nil
}

// deleteSubscription removes what the bench created, even after Ctrl-C.
func (b *bencher) deleteSubscription(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if _, err := b.hub.DeleteSubscription(ctx, b.tenant, id); err != nil {
		fmt.Fprintf(b.opts.Factory.IOStreams.ErrOut, "Warning: could not delete the bench subscription %s: %v\n", id, err)
	}
}

// urlWarmDelivered reports whether the hub recorded the warm-up event as
// delivered (--url, where the bench sees no request).
func (b *bencher) urlWarmDelivered(ctx context.Context, subID, id string, sent time.Time) (bool, error) {
	found := false
	err := b.succeededSince(ctx, subID, sent, func(d hubapi.Delivery) { found = found || d.EventID == id })
	return found, err
}

// urlDelivered reads the hub's delivery records of the measured run
// (--url): an event is delivered at its succeeded_at.
func (b *bencher) urlDelivered(ctx context.Context, subID string, start time.Time, sent map[string]time.Time) error {
	var arrivals []arrival
	seen := make(map[string]bool, len(sent))
	err := b.succeededSince(ctx, subID, start, func(d hubapi.Delivery) {
		at, ok := sent[d.EventID]
		if !ok || d.SucceededAt == nil || seen[d.EventID] {
			return
		}
		seen[d.EventID] = true
		arrivals = append(arrivals, arrival{eventID: d.EventID, sent: at, at: *d.SucceededAt})
	})
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.arrivals = arrivals
	if len(arrivals) >= b.opts.Events {
		select {
		case <-b.done:
		default:
			close(b.done)
		}
	}
	return nil
}

// clockSlack is how far the hub's clock may be behind the bench's when
// succeededSince stops at deliveries older than the run.
const clockSlack = time.Minute

// succeededSince hands each succeeded delivery of the subscription created
// at or after since (less clockSlack) to each; the listing is newest event
// first, so it stops at the first older one.
func (b *bencher) succeededSince(ctx context.Context, subID string, since time.Time, each func(hubapi.Delivery)) error {
	p := hubapi.DeliveryListParams{ListParams: hubapi.ListParams{Limit: hubapi.MaxPageLimit}, State: "succeeded"}
	for {
		page, err := b.hub.ListDeliveries(ctx, b.tenant, subID, p)
		if err != nil {
			return err
		}
		for _, d := range page.Items {
			if d.CreatedAt.Before(since.Add(-clockSlack)) {
				return nil
			}
			each(d)
		}
		if page.NextCursor == nil {
			return nil
		}
		p.Cursor = *page.NextCursor
	}
}
