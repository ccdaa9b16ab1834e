package service

import (
	"context"
	"strings"
	"time"

	"github.com/hubctl/hubctl/internal/clip"
	"github.com/hubctl/hubctl/internal/match"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sinkopen"
	"github.com/hubctl/hubctl/internal/store/catalog"
)

const (
	// maxVerificationErrorBytes bounds the probe message kept on the row.
	maxVerificationErrorBytes = 1000
	// probeGrace lets a sink report its own timeout before the hub's
	// context cuts the probe short.
	probeGrace = 5 * time.Second
)

// verifyChange runs the verification a new or re-pointed subscription gets
// and records its outcome. A caller that went away leaves the row pending
// (nothing was learnt about the destination); Verify can finish the job.
func (s *Subscriptions) verifyChange(ctx context.Context, sub catalog.Subscription) (catalog.Subscription, error) {
	failure, err := s.probe(ctx, sub)
	if ctx.Err() != nil {
		return sub, nil
	}
	if err != nil {
		return catalog.Subscription{}, err
	}
	recorded, err := s.recordVerification(ctx, sub, failure, false)
	return recorded, subscriptionError(sub.ID.String(), err)
}

// probe asks sub's destination whether it accepts us. failure is the
// destination's answer, to be recorded; err is a failure of the hub's own
// (a key it cannot decrypt with, a cancelled request), which says nothing
// about the destination and must not be recorded.
func (s *Subscriptions) probe(ctx context.Context, sub catalog.Subscription) (failure, err error) {
	snk, err := s.opener.Open(sub)
	if sinkopen.IsRefused(err) {
		return err, nil
	}
	if err != nil {
		return nil, err
	}
	defer snk.Close()
	probeCtx, cancel := context.WithTimeout(ctx, sub.AttemptTimeout+probeGrace)
	defer cancel()
	failure = snk.Probe(probeCtx, sink.ProbeRequest{
		SubscriptionID: sub.ID.String(), TenantID: sub.TenantID, Timeout: sub.AttemptTimeout, EventTypes: sub.EventTypes,
	})
	if failure != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return failure, nil
}

// recordVerification stores a probe's outcome on the row it probed. If the
// sink changed meanwhile, the outcome is about a destination no longer
// configured and is dropped: the change's own verification decides.
func (s *Subscriptions) recordVerification(ctx context.Context, probed catalog.Subscription, failure error, recover bool) (catalog.Subscription, error) {
	now := s.now()
	return s.store.UpdateSubscriptionReported(ctx, probed.TenantID, probed.ID, now, func(sub *catalog.Subscription) error {
		if sub.Destination == probed.Destination && string(sub.SinkConfig) == string(probed.SinkConfig) &&
			sub.SinkCredentials == probed.SinkCredentials {
			applyVerification(sub, failure, recover, now)
		}
		return nil
	}, s.report(now))
}

// applyVerification records a probe's outcome. recover is Verify's extra
// on success (docs/concepts.md, Verification): enable and clear what auto-disable left behind.
func applyVerification(sub *catalog.Subscription, failure error, recover bool, now time.Time) {
	if failure != nil {
		sub.VerificationState, sub.VerificationError = match.VerificationFailed, probeMessage(failure)
		return
	}
	sub.VerificationState, sub.VerificationError, sub.VerifiedAt = match.VerificationActive, "", &now
	if recover {
		sub.Enabled, sub.DisabledReason, sub.FailingSince, sub.LastFailureAt = true, "", nil, nil
	}
}

// probeMessage makes a probe's error storable and showable: valid UTF-8
// without NULs (PostgreSQL text takes neither), bounded in size.
func probeMessage(failure error) string {
	msg := strings.ReplaceAll(strings.ToValidUTF8(failure.Error(), "\uFFFD"), "\x00", "")
	msg = clip.String(msg, maxVerificationErrorBytes)
	if strings.TrimSpace(msg) == "" {
		return "the probe failed without saying why"
	}
	return msg
}
