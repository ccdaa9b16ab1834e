package service

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/match"
	"github.com/hubctl/hubctl/internal/opevents"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sinkopen"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/oncall"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/pkg/hubapi"
	whsign "github.com/hubctl/hubctl/pkg/webhook"
)

// Sink types the use cases treat specially (docs/concepts.md, Sinks): only webhooks sign,
// so only they have secrets.
const (
	sinkWebhook = "webhook"
	sinkPull    = "pull"
)

// SubscriptionOptions tune the subscription use cases.
type SubscriptionOptions struct {
	// Now stamps every change; nil means time.Now.
	Now func() time.Time
	// RotationOverlap is how long a rotated-out secret keeps signing
	// (STREAMING_HUB_ROTATION_OVERLAP); zero drops it at once.
	RotationOverlap time.Duration
	// MaxPerTenant caps a tenant's live subscriptions
	// (STREAMING_HUB_MAX_SUBSCRIPTIONS_PER_TENANT); zero is no cap.
	MaxPerTenant int
	// TypePrefix starts the ce type of operational events
	// (STREAMING_HUB_TYPE_PREFIX); "" is the default prefix.
	TypePrefix string
	// RelayOperational keeps operational events for the operational
	// topic's relay (STREAMING_HUB_OPERATIONAL_TOPIC is set).
	RelayOperational bool
}

// Subscriptions manages a tenant's subscriptions (docs/concepts.md, Subscriptions). Every method is
// scoped to one tenant: another tenant's subscription answers exactly like
// a missing one.
type Subscriptions struct {
	store *catalog.Store
	// jobs queues the recovered events of Recover.
	jobs *queue.Store
	// breakers reads the breaker states the running hubs report.
	breakers *oncall.Store
	keys     *crypto.Keyring
	sinks    *sink.Registry
	opener   *sinkopen.Opener
	now      func() time.Time
	overlap  time.Duration
	// maxPerTenant caps a tenant's live subscriptions; zero is no cap.
	maxPerTenant int
	// events makes the operational events of changes, which name actor.
	events opevents.Builder
	actor  opevents.Actor
}

// NewSubscriptions returns the subscription use cases over st, recovering
// events into jobs through jobs and reading breakers from breakers. keys
// seals secrets and credentials; sinks parses sink objects and runs
// verification probes.
func NewSubscriptions(st *catalog.Store, jobs *queue.Store, breakers *oncall.Store, keys *crypto.Keyring, sinks *sink.Registry, opts SubscriptionOptions) *Subscriptions {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	prefix := opts.TypePrefix
	if prefix == "" {
		prefix = event.DefaultTypePrefix
	}
	return &Subscriptions{store: st, jobs: jobs, breakers: breakers, keys: keys, sinks: sinks, opener: sinkopen.New(keys, sinks, now), now: now,
		overlap: max(opts.RotationOverlap, 0), maxPerTenant: max(opts.MaxPerTenant, 0),
		events: opevents.Builder{TypePrefix: prefix, Relay: opts.RelayOperational}, actor: opevents.ActorOf(hubapi.Admin())}
}

// Create validates in, stores the subscription and verifies it at once. The
// view carries the verification's outcome; secret is the webhook's signing
// secret, returned only here and by RotateSecret ("" for other sinks).
// Creating for a tenant that is inactive is allowed: the roster only gates
// ingest, and a tenant may set up subscriptions before it goes live.
func (s *Subscriptions) Create(ctx context.Context, tenantID string, in hubapi.SubscriptionCreate) (view hubapi.Subscription, secret string, err error) {
	spec, err := s.checkCreate(in)
	if err != nil {
		return hubapi.Subscription{}, "", err
	}
	if hubapi.CheckTenantID(tenantID) != nil {
		return hubapi.Subscription{}, "", tenantError(tenantID, pg.ErrNotFound)
	}
	if spec.row.SinkType == sinkWebhook {
		if secret = in.SigningSecret; secret == "" {
			if secret, err = newSecret(spec.row.SignatureScheme); err != nil {
				return hubapi.Subscription{}, "", err
			}
		}
	}
	id, err := uuid.NewV7()
	if err != nil {
		return hubapi.Subscription{}, "", fmt.Errorf("new subscription id: %w", err)
	}
	row := spec.row
	row.ID, row.TenantID, row.CreatedAt = id, tenantID, s.now()
	if err := s.sealSink(&row, spec.sink); err != nil {
		return hubapi.Subscription{}, "", err
	}
	if secret != "" {
		if row.SigningSecret, err = s.seal(secret, id, catalog.ColumnSigningSecret); err != nil {
			return hubapi.Subscription{}, "", err
		}
	}
	created, err := s.store.CreateSubscriptionReported(ctx, row, s.maxPerTenant, s.report(row.CreatedAt))
	if errors.Is(err, pg.ErrNotFound) {
		return hubapi.Subscription{}, "", tenantError(tenantID, err)
	}
	if limit := (*catalog.SubscriptionLimitError)(nil); errors.As(err, &limit) {
		return hubapi.Subscription{}, "", &hubapi.ConflictError{Code: CodeSubscriptionLimitReached, Err: err,
			Message: fmt.Sprintf("tenant %q already has %d subscriptions, the most allowed (STREAMING_HUB_MAX_SUBSCRIPTIONS_PER_TENANT); delete one to create another", tenantID, limit.Limit)}
	}
	if err != nil {
		return hubapi.Subscription{}, "", err
	}
	if created, err = s.verifyChange(ctx, created); err != nil {
		return hubapi.Subscription{}, "", err
	}
	view, err = s.view(created)
	return view, secret, err
}

// Get reads one subscription.
func (s *Subscriptions) Get(ctx context.Context, tenantID, id string) (hubapi.Subscription, error) {
	sub, err := s.read(ctx, tenantID, id)
	if err != nil {
		return hubapi.Subscription{}, err
	}
	view, err := s.view(sub)
	if err != nil {
		return hubapi.Subscription{}, err
	}
	if view, err = s.withRate(ctx, sub, view); err != nil {
		return hubapi.Subscription{}, err
	}
	return s.withBreaker(ctx, sub, view)
}

// List pages through a tenant's subscriptions, oldest first.
func (s *Subscriptions) List(ctx context.Context, tenantID string, p hubapi.ListParams) (hubapi.Page[hubapi.Subscription], error) {
	limit, err := pageLimit(p.Limit)
	if err != nil {
		return hubapi.Page[hubapi.Subscription]{}, err
	}
	after, err := positionAfter(subscriptionsCursor, p.Cursor, parseSubscriptionPosition)
	if err != nil {
		return hubapi.Page[hubapi.Subscription]{}, err
	}
	page := hubapi.Page[hubapi.Subscription]{Items: []hubapi.Subscription{}}
	if hubapi.CheckTenantID(tenantID) != nil {
		return page, nil
	}
	rows, more, err := s.store.ListSubscriptions(ctx, tenantID, after, limit)
	if err != nil {
		return hubapi.Page[hubapi.Subscription]{}, err
	}
	for _, row := range rows {
		v, err := s.view(row)
		if err != nil {
			return hubapi.Page[hubapi.Subscription]{}, err
		}
		page.Items = append(page.Items, v)
	}
	if more {
		last := rows[len(rows)-1]
		page.NextCursor = encodeCursor(subscriptionsCursor, formatSubscriptionPosition(last.CreatedAt, last.ID))
	}
	return page, nil
}

// Update applies a PATCH. A sink whose configuration really changed goes
// back to pending and is verified again at once, like a new subscription:
// the new destination has not been shown to accept deliveries. Resending
// the same sink changes nothing, so matching never pauses for it; nor does
// resending it as a read shows it, since a credential or signing secret
// sent back masked keeps its current value. The sink type cannot change
// (pull cursors and secrets hang off it); a new subscription is the way to
// switch. A switch of signature_scheme rotates the signing secret, to the
// patch's own or to a generated one, which the answer carries this once.
func (s *Subscriptions) Update(ctx context.Context, tenantID, id string, in hubapi.SubscriptionUpdate) (hubapi.UpdatedSubscription, error) {
	patch, err := s.checkUpdate(in)
	if err != nil {
		return hubapi.UpdatedSubscription{}, err
	}
	subID, err := s.scope(tenantID, id)
	if err != nil {
		return hubapi.UpdatedSubscription{}, err
	}
	var sinkChanged bool
	var generated string
	updated, err := s.change(ctx, tenantID, id, subID, func(sub *catalog.Subscription, now time.Time) error {
		var err error
		sinkChanged, generated, err = s.applyPatch(sub, patch, now)
		return err
	})
	if err != nil {
		return hubapi.UpdatedSubscription{}, err
	}
	if sinkChanged {
		if updated, err = s.verifyChange(ctx, updated); err != nil {
			return hubapi.UpdatedSubscription{}, err
		}
	}
	view, err := s.view(updated)
	if err != nil {
		return hubapi.UpdatedSubscription{}, err
	}
	answer := hubapi.UpdatedSubscription{Subscription: view, SigningSecret: view.SigningSecret}
	if generated != "" {
		answer.SigningSecret = generated
	}
	return answer, nil
}

// Delete soft-deletes a subscription and cancels its pending deliveries in
// the same transaction, returning how many it canceled. Deliveries in
// flight finish their current attempt.
func (s *Subscriptions) Delete(ctx context.Context, tenantID, id string) (canceledJobs int64, err error) {
	subID, err := s.scope(tenantID, id)
	if err != nil {
		return 0, err
	}
	now := s.now()
	canceledJobs, err = s.store.DeleteSubscriptionReported(ctx, tenantID, subID, now, s.report(now))
	return canceledJobs, subscriptionError(id, err)
}

// Enable turns delivery back on. It also clears disabled_reason, which
// explains only a subscription the hub has disabled; it leaves the failure
// span and the verification state alone, so an auto-disabled destination
// that still fails is disabled again, and only Verify recovers it fully.
func (s *Subscriptions) Enable(ctx context.Context, tenantID, id string) (hubapi.Subscription, error) {
	return s.setEnabled(ctx, tenantID, id, true)
}

// Disable stops delivery; a reason the hub recorded stays.
func (s *Subscriptions) Disable(ctx context.Context, tenantID, id string) (hubapi.Subscription, error) {
	return s.setEnabled(ctx, tenantID, id, false)
}

func (s *Subscriptions) setEnabled(ctx context.Context, tenantID, id string, enabled bool) (hubapi.Subscription, error) {
	subID, err := s.scope(tenantID, id)
	if err != nil {
		return hubapi.Subscription{}, err
	}
	updated, err := s.change(ctx, tenantID, id, subID, func(sub *catalog.Subscription, _ time.Time) error {
		applyEnabled(sub, enabled)
		return nil
	})
	if err != nil {
		return hubapi.Subscription{}, err
	}
	return s.view(updated)
}

func applyEnabled(sub *catalog.Subscription, enabled bool) {
	sub.Enabled = enabled
	if enabled {
		sub.DisabledReason = ""
	}
}

// Verify probes the destination again (docs/concepts.md, Verification). Success makes the
// subscription active and enabled and clears disabled_reason and the
// failure span: this recovers an auto-disabled subscription in place. A
// failure sets the state to failed, keeps the probe's message, changes
// nothing else, and comes back as a verification_failed error.
func (s *Subscriptions) Verify(ctx context.Context, tenantID, id string) (hubapi.Subscription, error) {
	sub, err := s.read(ctx, tenantID, id)
	if err != nil {
		return hubapi.Subscription{}, err
	}
	failure, err := s.probe(ctx, sub)
	if err != nil {
		return hubapi.Subscription{}, err
	}
	recorded, err := s.recordVerification(ctx, sub, failure, true)
	if err != nil {
		return hubapi.Subscription{}, subscriptionError(id, err)
	}
	if failure != nil {
		return hubapi.Subscription{}, &hubapi.UnprocessableError{Code: CodeVerificationFailed, Message: "verification failed: " + probeMessage(failure)}
	}
	return s.view(recorded)
}

// RotateSecret gives a webhook a new signing secret, the caller's (at least
// 24 characters) or a generated one (docs/concepts.md, Secret rotation). The current secret keeps
// signing for the rotation overlap; rotating again within it drops the
// oldest, so at most two secrets ever sign.
//
// A standard-webhooks subscription's secret must be what the official
// libraries decode, and a generated one is.
func (s *Subscriptions) RotateSecret(ctx context.Context, tenantID, id, signingSecret string) (hubapi.SecretRotation, error) {
	if signingSecret != "" {
		if err := checkSigningSecret(signingSecret, whsign.SchemeLerian); err != nil {
			return hubapi.SecretRotation{}, err
		}
	}
	subID, err := s.scope(tenantID, id)
	if err != nil {
		return hubapi.SecretRotation{}, err
	}
	var secret string
	rotated, err := s.change(ctx, tenantID, id, subID, func(sub *catalog.Subscription, now time.Time) error {
		if sub.SinkType != sinkWebhook {
			return &hubapi.ConflictError{Code: CodeNotAWebhookSubscription,
				Message: fmt.Sprintf("subscription %s has a %s sink, which does not sign: only webhook subscriptions have a signing secret", sub.ID, sub.SinkType)}
		}
		var err error
		if secret, err = secretFor(sub.SignatureScheme, signingSecret); err != nil {
			return err
		}
		return s.rotate(sub, secret, sub.SignatureScheme, now)
	})
	if err != nil {
		return hubapi.SecretRotation{}, err
	}
	return hubapi.SecretRotation{SigningSecret: secret, PreviousSecretExpiresAt: utcPtr(rotated.PreviousSecretExpiresAt)}, nil
}

// --- reading and changing rows -------------------------------------------

// scope parses a subscription id. A malformed id, or a tenant id no tenant
// can have, answers like any missing subscription.
func (s *Subscriptions) scope(tenantID, id string) (uuid.UUID, error) {
	subID, err := uuid.Parse(id)
	if err != nil || hubapi.CheckTenantID(tenantID) != nil {
		return uuid.UUID{}, subscriptionError(id, pg.ErrNotFound)
	}
	return subID, nil
}

func (s *Subscriptions) read(ctx context.Context, tenantID, id string) (catalog.Subscription, error) {
	subID, err := s.scope(tenantID, id)
	if err != nil {
		return catalog.Subscription{}, err
	}
	sub, err := s.store.GetSubscription(ctx, tenantID, subID)
	return sub, subscriptionError(id, err)
}

// change runs edit on the locked row; edit gets the time the change is
// stamped with.
func (s *Subscriptions) change(ctx context.Context, tenantID, id string, subID uuid.UUID, edit func(*catalog.Subscription, time.Time) error) (catalog.Subscription, error) {
	now := s.now()
	sub, err := s.store.UpdateSubscriptionReported(ctx, tenantID, subID, now, func(sub *catalog.Subscription) error {
		return edit(sub, now)
	}, s.report(now))
	return sub, subscriptionError(id, err)
}

// applyPatch edits sub as patch says and reports whether the sink changed,
// and the secret it generated when a switch of scheme rotated to one.
func (s *Subscriptions) applyPatch(sub *catalog.Subscription, p subscriptionPatch, now time.Time) (sinkChanged bool, generated string, err error) {
	if p.sink != nil {
		if p.sink.TypeName != sub.SinkType {
			return false, "", &hubapi.ValidationError{Field: "sink.type", Code: CodeInvalidSink,
				Message: fmt.Sprintf("invalid sink: type cannot change from %q to %q; create a new subscription instead", sub.SinkType, p.sink.TypeName)}
		}
		current, err := s.opener.Config(*sub)
		if err != nil {
			return false, "", err
		}
		// Parsed here rather than with the other fields: credentials sent
		// back masked stand for the current ones, which only the row holds.
		ps, err := parseSink(*p.sink, &current)
		if err != nil {
			return false, "", err
		}
		if sinkChanged = current.Differs(ps.Config); sinkChanged {
			if err := s.sealSink(sub, ps); err != nil {
				return false, "", err
			}
			sub.VerificationState, sub.VerificationError, sub.VerifiedAt = match.VerificationPending, "", nil
		}
	}
	if p.signingSecret != "" && sub.SinkType != sinkWebhook {
		return false, "", invalid("signing_secret", "invalid signing_secret: only webhook subscriptions have one, this one has a %s sink", sub.SinkType)
	}
	if p.signatureScheme != "" && sub.SinkType != sinkWebhook {
		return false, "", invalid("signature_scheme", "invalid signature_scheme: only webhook subscriptions sign, this one has a %s sink", sub.SinkType)
	}
	scheme := sub.SignatureScheme
	if p.signatureScheme != "" {
		scheme = p.signatureScheme
	}
	// The mask reads show keeps the secret: sending a read back must not
	// rotate it. A switch of scheme always rotates: no secret signs in two
	// schemes.
	secret := p.signingSecret
	if secret == hubapi.Masked {
		secret = ""
	}
	if switched := scheme != sub.SignatureScheme; switched || secret != "" {
		if secret == "" {
			if secret, err = newSecret(scheme); err != nil {
				return false, "", err
			}
			generated = secret
		} else if err := checkSigningSecret(secret, scheme); err != nil {
			return false, "", err
		}
		if err := s.rotate(sub, secret, scheme, now); err != nil {
			return false, "", err
		}
	}
	if p.name != nil {
		sub.Name = *p.name
	}
	if p.eventTypes != nil {
		sub.EventTypes = p.eventTypes
	}
	if p.schemaMajor != nil {
		sub.SchemaMajor = *p.schemaMajor
	}
	if p.origin.Set {
		sub.Origin = p.origin.Value
	}
	if p.filter.Set {
		sub.Filter = p.filter.Value
	}
	if p.ordering != nil {
		if err := checkOrdering(*p.ordering, sub.SinkType); err != nil {
			return false, "", err
		}
		sub.Ordering = orderingOf(*p.ordering)
	}
	if p.rateLimit.Set {
		if !p.rateLimit.Null {
			if err := checkRateLimit(p.rateLimit.Value, sub.SinkType); err != nil {
				return false, "", err
			}
		}
		sub.RateLimit = p.rateLimit.Value
	}
	if p.retrySchedule.Set {
		sub.RetrySchedule = p.retrySchedule.Value
	}
	if p.attemptTimeout != nil {
		sub.AttemptTimeout = *p.attemptTimeout
	}
	if p.enabled != nil {
		applyEnabled(sub, *p.enabled)
	}
	return sinkChanged, generated, nil
}

// --- views -------------------------------------------------------------------

func (s *Subscriptions) view(sub catalog.Subscription) (hubapi.Subscription, error) {
	sinkView, err := s.maskedSink(sub)
	if err != nil {
		return hubapi.Subscription{}, err
	}
	v := hubapi.Subscription{
		ID:                sub.ID.String(),
		TenantID:          sub.TenantID,
		Name:              sub.Name,
		Sink:              sinkView,
		EventTypes:        sub.EventTypes,
		SchemaMajor:       sub.SchemaMajor,
		RetrySchedule:     sub.RetrySchedule,
		AttemptTimeout:    sub.AttemptTimeout.String(),
		Enabled:           sub.Enabled,
		VerificationState: sub.VerificationState,
		FailingSince:      utcPtr(sub.FailingSince),
		LastFailureAt:     utcPtr(sub.LastFailureAt),
		CreatedAt:         sub.CreatedAt.UTC(),
		UpdatedAt:         sub.UpdatedAt.UTC(),
	}
	if sub.Origin != "" {
		v.Origin = &sub.Origin
	}
	if sub.Filter != "" {
		v.Filter = &sub.Filter
	}
	v.Ordering = match.OrderingNone
	if sub.Ordering != "" {
		v.Ordering = sub.Ordering
	}
	if sub.RateLimit > 0 {
		v.RateLimit = &sub.RateLimit
	}
	if sub.VerificationState == match.VerificationFailed {
		v.VerificationError = sub.VerificationError
	}
	if sub.DisabledReason != "" {
		v.DisabledReason = &sub.DisabledReason
	}
	if sub.SigningSecret != "" {
		v.SigningSecret = hubapi.Masked
	}
	if sub.SinkType == sinkWebhook {
		v.SignatureScheme = sub.SignatureScheme
	}
	// After the overlap the old secret no longer signs, so there is no
	// overlap left to show.
	if sinkopen.PreviousSecretSigns(sub, s.now()) {
		v.PreviousSecretExpiresAt = utcPtr(sub.PreviousSecretExpiresAt)
	}
	return v, nil
}

// maskedSink is the sink object as reads show it, credentials masked
// (sink.Registry.Show).
func (s *Subscriptions) maskedSink(sub catalog.Subscription) (map[string]any, error) {
	view, err := s.sinks.Show(sub.SinkType, sub.SinkConfig, sub.SinkCredentialFields)
	if err != nil {
		return nil, fmt.Errorf("subscription %s: %w", sub.ID, err)
	}
	return view, nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// --- cursors -------------------------------------------------------------------

// subscriptionsCursor names the subscription listing's cursors; a position
// is the last row's created_at in Unix microseconds and its id.
const subscriptionsCursor = "subscriptions"

func formatSubscriptionPosition(at time.Time, id uuid.UUID) string {
	return strconv.FormatInt(at.UnixMicro(), 10) + "." + id.String()
}

func parseSubscriptionPosition(position string) (*catalog.SubscriptionPosition, error) {
	microsText, idText, ok := strings.Cut(position, ".")
	if !ok {
		return nil, errBadCursor()
	}
	micros, err1 := strconv.ParseInt(microsText, 10, 64)
	id, err2 := uuid.Parse(idText)
	if err1 != nil || err2 != nil || micros < minCursorMicros || micros >= maxCursorMicros {
		return nil, errBadCursor()
	}
	return &catalog.SubscriptionPosition{CreatedAt: time.UnixMicro(micros).UTC(), ID: id}, nil
}
