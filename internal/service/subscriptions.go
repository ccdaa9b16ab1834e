package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/match"
	"github.com/hubctl/hubctl/internal/schedule"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/store"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Limits of the writable subscription fields (SPEC §2).
const (
	MaxSubscriptionNameChars = 200
	MaxRetrySteps            = schedule.MaxSteps
	MaxRetryStep             = schedule.MaxStep
	MinAttemptTimeout        = sink.MinAttemptTimeout
	MaxAttemptTimeout        = sink.MaxAttemptTimeout
	DefaultAttemptTimeout    = sink.DefaultAttemptTimeout
	MinSigningSecretChars    = 24
)

// Sink types the use cases treat specially (SPEC §4): only webhooks sign,
// so only they have secrets.
const (
	sinkWebhook = "webhook"
	sinkPull    = "pull"
)

const (
	// maxVerificationErrorBytes bounds the probe message kept on the row.
	maxVerificationErrorBytes = 1000
	// probeGrace lets a sink report its own timeout before the hub's
	// context cuts the probe short.
	probeGrace = 5 * time.Second
)

// SubscriptionOptions tune the subscription use cases.
type SubscriptionOptions struct {
	// Now stamps every change; nil means time.Now.
	Now func() time.Time
	// RotationOverlap is how long a rotated-out secret keeps signing
	// (STREAMING_HUB_ROTATION_OVERLAP); zero drops it at once.
	RotationOverlap time.Duration
}

// Subscriptions manages a tenant's subscriptions (SPEC §2). Every method is
// scoped to one tenant: another tenant's subscription answers exactly like
// a missing one.
type Subscriptions struct {
	store   *store.Store
	keys    *crypto.Keyring
	sinks   *sink.Registry
	now     func() time.Time
	overlap time.Duration
}

// NewSubscriptions returns the subscription use cases. keys seals secrets
// and credentials; sinks parses sink objects and runs verification probes.
func NewSubscriptions(st *store.Store, keys *crypto.Keyring, sinks *sink.Registry, opts SubscriptionOptions) *Subscriptions {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Subscriptions{store: st, keys: keys, sinks: sinks, now: now, overlap: max(opts.RotationOverlap, 0)}
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
	if !tenantIDPattern.MatchString(tenantID) {
		return hubapi.Subscription{}, "", tenantError(tenantID, store.ErrNotFound)
	}
	if spec.row.SinkType == sinkWebhook {
		if secret = in.SigningSecret; secret == "" {
			if secret, err = crypto.RandomSecret(); err != nil {
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
		if row.SigningSecret, err = s.seal(secret, id, store.ColumnSigningSecret); err != nil {
			return hubapi.Subscription{}, "", err
		}
	}
	created, err := s.store.CreateSubscription(ctx, row)
	if errors.Is(err, store.ErrNotFound) {
		return hubapi.Subscription{}, "", tenantError(tenantID, err)
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
	return s.withBreaker(ctx, sub, view)
}

// List pages through a tenant's subscriptions, oldest first.
func (s *Subscriptions) List(ctx context.Context, tenantID string, p ListParams) (hubapi.Page[hubapi.Subscription], error) {
	limit, err := pageLimit(p.Limit)
	if err != nil {
		return hubapi.Page[hubapi.Subscription]{}, err
	}
	var after *store.SubscriptionPosition
	if p.Cursor != "" {
		position, err := decodeCursor(subscriptionsCursor, p.Cursor)
		if err != nil {
			return hubapi.Page[hubapi.Subscription]{}, err
		}
		if after, err = parseSubscriptionPosition(position); err != nil {
			return hubapi.Page[hubapi.Subscription]{}, err
		}
	}
	page := hubapi.Page[hubapi.Subscription]{Items: []hubapi.Subscription{}}
	if !tenantIDPattern.MatchString(tenantID) {
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
// switch.
func (s *Subscriptions) Update(ctx context.Context, tenantID, id string, in hubapi.SubscriptionUpdate) (hubapi.Subscription, error) {
	patch, err := s.checkUpdate(in)
	if err != nil {
		return hubapi.Subscription{}, err
	}
	subID, err := s.scope(tenantID, id)
	if err != nil {
		return hubapi.Subscription{}, err
	}
	var sinkChanged bool
	updated, err := s.change(ctx, tenantID, id, subID, func(sub *store.Subscription, now time.Time) error {
		var err error
		sinkChanged, err = s.applyPatch(sub, patch, now)
		return err
	})
	if err != nil {
		return hubapi.Subscription{}, err
	}
	if sinkChanged {
		if updated, err = s.verifyChange(ctx, updated); err != nil {
			return hubapi.Subscription{}, err
		}
	}
	return s.view(updated)
}

// Delete soft-deletes a subscription and cancels its pending deliveries in
// the same transaction, returning how many it canceled. Deliveries in
// flight finish their current attempt.
func (s *Subscriptions) Delete(ctx context.Context, tenantID, id string) (canceledJobs int64, err error) {
	subID, err := s.scope(tenantID, id)
	if err != nil {
		return 0, err
	}
	canceledJobs, err = s.store.DeleteSubscription(ctx, tenantID, subID, s.now())
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
	updated, err := s.change(ctx, tenantID, id, subID, func(sub *store.Subscription, _ time.Time) error {
		applyEnabled(sub, enabled)
		return nil
	})
	if err != nil {
		return hubapi.Subscription{}, err
	}
	return s.view(updated)
}

func applyEnabled(sub *store.Subscription, enabled bool) {
	sub.Enabled = enabled
	if enabled {
		sub.DisabledReason = ""
	}
}

// Verify probes the destination again (SPEC §2.2). Success makes the
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
		return hubapi.Subscription{}, &UnprocessableError{Code: CodeVerificationFailed, Message: "verification failed: " + probeMessage(failure)}
	}
	return s.view(recorded)
}

// RotateSecret gives a webhook a new signing secret, the caller's (at least
// 24 characters) or a generated one (SPEC §2.3). The current secret keeps
// signing for the rotation overlap; rotating again within it drops the
// oldest, so at most two secrets ever sign.
func (s *Subscriptions) RotateSecret(ctx context.Context, tenantID, id, signingSecret string) (hubapi.SecretRotation, error) {
	if signingSecret != "" {
		if err := checkSigningSecret(signingSecret); err != nil {
			return hubapi.SecretRotation{}, err
		}
	}
	subID, err := s.scope(tenantID, id)
	if err != nil {
		return hubapi.SecretRotation{}, err
	}
	secret := signingSecret
	if secret == "" {
		if secret, err = crypto.RandomSecret(); err != nil {
			return hubapi.SecretRotation{}, err
		}
	}
	rotated, err := s.change(ctx, tenantID, id, subID, func(sub *store.Subscription, now time.Time) error {
		if sub.SinkType != sinkWebhook {
			return &ConflictError{Code: CodeNotAWebhookSubscription,
				Message: fmt.Sprintf("subscription %s has a %s sink, which does not sign: only webhook subscriptions have a signing secret", sub.ID, sub.SinkType)}
		}
		return s.rotate(sub, secret, now)
	})
	if err != nil {
		return hubapi.SecretRotation{}, err
	}
	return hubapi.SecretRotation{SigningSecret: secret, PreviousSecretExpiresAt: utcPtr(rotated.PreviousSecretExpiresAt)}, nil
}

// SigningSecrets returns the secrets a delivery to sub is signed with,
// newest first: the current one, and the previous one until its overlap
// ends. Non-webhook subscriptions have none.
func (s *Subscriptions) SigningSecrets(sub store.Subscription) ([]string, error) {
	if sub.SigningSecret == "" {
		return nil, nil
	}
	current, err := s.open(sub.SigningSecret, sub.ID, store.ColumnSigningSecret)
	if err != nil {
		return nil, err
	}
	secrets := []string{current}
	if !previousSecretLive(sub, s.now()) {
		return secrets, nil
	}
	previous, err := s.open(sub.PreviousSecret, sub.ID, store.ColumnPreviousSecret)
	if err != nil {
		return nil, err
	}
	return append(secrets, previous), nil
}

// previousSecretLive reports whether sub's rotated-out secret still signs.
func previousSecretLive(sub store.Subscription, now time.Time) bool {
	return sub.PreviousSecret != "" && sub.PreviousSecretExpiresAt != nil && now.Before(*sub.PreviousSecretExpiresAt)
}

// OpenSink builds sub's sink with its credentials and signing secrets
// decrypted. The caller closes it.
func (s *Subscriptions) OpenSink(sub store.Subscription) (sink.Sink, error) {
	t, cfg, secrets, err := s.sinkSetup(sub)
	if err != nil {
		return nil, err
	}
	return t.Open(cfg, secrets)
}

func (s *Subscriptions) sinkSetup(sub store.Subscription) (sink.Type, sink.Config, []string, error) {
	t, err := s.sinks.Lookup(sub.SinkType)
	if err != nil {
		return nil, sink.Config{}, nil, fmt.Errorf("subscription %s: %w", sub.ID, err)
	}
	cfg, err := s.sinkConfig(sub)
	if err != nil {
		return nil, sink.Config{}, nil, err
	}
	secrets, err := s.SigningSecrets(sub)
	if err != nil {
		return nil, sink.Config{}, nil, err
	}
	return t, cfg, secrets, nil
}

// sinkConfig is sub's sink configuration with its credentials decrypted, in
// memory only.
func (s *Subscriptions) sinkConfig(sub store.Subscription) (sink.Config, error) {
	cfg := sink.Config{Public: sub.SinkConfig, Destination: sub.Destination}
	if sub.SinkCredentials != "" {
		var err error
		if cfg.Credentials, err = s.keys.Decrypt(sub.SinkCredentials, sub.ID.String(), store.ColumnSinkCredentials); err != nil {
			return sink.Config{}, fmt.Errorf("subscription %s: decrypt sink credentials: %w", sub.ID, err)
		}
	}
	return cfg, nil
}

// --- reading and changing rows -------------------------------------------

// scope parses a subscription id. A malformed id, or a tenant id no tenant
// can have, answers like any missing subscription.
func (s *Subscriptions) scope(tenantID, id string) (uuid.UUID, error) {
	subID, err := uuid.Parse(id)
	if err != nil || !tenantIDPattern.MatchString(tenantID) {
		return uuid.UUID{}, subscriptionError(id, store.ErrNotFound)
	}
	return subID, nil
}

func (s *Subscriptions) read(ctx context.Context, tenantID, id string) (store.Subscription, error) {
	subID, err := s.scope(tenantID, id)
	if err != nil {
		return store.Subscription{}, err
	}
	sub, err := s.store.GetSubscription(ctx, tenantID, subID)
	return sub, subscriptionError(id, err)
}

// change runs edit on the locked row; edit gets the time the change is
// stamped with.
func (s *Subscriptions) change(ctx context.Context, tenantID, id string, subID uuid.UUID, edit func(*store.Subscription, time.Time) error) (store.Subscription, error) {
	now := s.now()
	sub, err := s.store.UpdateSubscription(ctx, tenantID, subID, now, func(sub *store.Subscription) error {
		return edit(sub, now)
	})
	return sub, subscriptionError(id, err)
}

// applyPatch edits sub as patch says and reports whether the sink changed.
func (s *Subscriptions) applyPatch(sub *store.Subscription, p subscriptionPatch, now time.Time) (sinkChanged bool, err error) {
	if p.sink != nil {
		if p.sink.typeName != sub.SinkType {
			return false, &ValidationError{Field: "sink.type", Code: CodeInvalidSink,
				Message: fmt.Sprintf("invalid sink: type cannot change from %q to %q; create a new subscription instead", sub.SinkType, p.sink.typeName)}
		}
		current, err := s.sinkConfig(*sub)
		if err != nil {
			return false, err
		}
		// Parsed here rather than with the other fields: credentials sent
		// back masked stand for the current ones, which only the row holds.
		ps, err := s.parseSink(*p.sink, &current)
		if err != nil {
			return false, err
		}
		if sinkChanged = sinkDiffers(current, ps.config); sinkChanged {
			if err := s.sealSink(sub, ps); err != nil {
				return false, err
			}
			sub.VerificationState, sub.VerificationError, sub.VerifiedAt = match.VerificationPending, "", nil
		}
	}
	if p.signingSecret != "" {
		if sub.SinkType != sinkWebhook {
			return false, invalid("signing_secret", "invalid signing_secret: only webhook subscriptions have one, this one has a %s sink", sub.SinkType)
		}
		// The mask reads show keeps the secret: sending a read back must
		// not rotate it.
		if p.signingSecret != hubapi.Masked {
			if err := s.rotate(sub, p.signingSecret, now); err != nil {
				return false, err
			}
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
	if p.retrySchedule.Set {
		sub.RetrySchedule = p.retrySchedule.Value
	}
	if p.attemptTimeout != nil {
		sub.AttemptTimeout = *p.attemptTimeout
	}
	if p.enabled != nil {
		applyEnabled(sub, *p.enabled)
	}
	return sinkChanged, nil
}

// sinkDiffers reports whether cfg configures something other than current,
// the stored configuration with its credentials decrypted. Both sides are
// compared as JSON values: jsonb does not keep the layout Parse produced.
func sinkDiffers(current, cfg sink.Config) bool {
	if current.Destination != cfg.Destination || !sameJSON(current.Public, cfg.Public) {
		return true
	}
	if current.Credentials == nil || cfg.Credentials == nil {
		return (current.Credentials == nil) != (cfg.Credentials == nil)
	}
	return !sameJSON(current.Credentials, cfg.Credentials)
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// rotate makes secret the current one. The current secret becomes the
// previous one whatever the previous was, which is how a second rotation
// inside an overlap drops the oldest. Envelopes are bound to their column,
// so the old secret is re-sealed for previous_secret rather than moved.
func (s *Subscriptions) rotate(sub *store.Subscription, secret string, now time.Time) error {
	sealed, err := s.seal(secret, sub.ID, store.ColumnSigningSecret)
	if err != nil {
		return err
	}
	sub.PreviousSecret, sub.PreviousSecretExpiresAt = "", nil
	if s.overlap > 0 {
		current, err := s.open(sub.SigningSecret, sub.ID, store.ColumnSigningSecret)
		if err != nil {
			return err
		}
		if sub.PreviousSecret, err = s.seal(current, sub.ID, store.ColumnPreviousSecret); err != nil {
			return err
		}
		expires := now.Add(s.overlap)
		sub.PreviousSecretExpiresAt = &expires
	}
	sub.SigningSecret = sealed
	return nil
}

func (s *Subscriptions) seal(plaintext string, id uuid.UUID, column string) (string, error) {
	sealed, err := s.keys.Encrypt([]byte(plaintext), id.String(), column)
	if err != nil {
		return "", fmt.Errorf("subscription %s: encrypt %s: %w", id, column, err)
	}
	return sealed, nil
}

func (s *Subscriptions) open(envelope string, id uuid.UUID, column string) (string, error) {
	plaintext, err := s.keys.Decrypt(envelope, id.String(), column)
	if err != nil {
		return "", fmt.Errorf("subscription %s: decrypt %s: %w", id, column, err)
	}
	return string(plaintext), nil
}

// sealSink stores a parsed sink configuration on sub, credentials sealed.
func (s *Subscriptions) sealSink(sub *store.Subscription, ps parsedSink) error {
	sub.SinkConfig = ps.config.Public
	sub.Destination = ps.config.Destination
	sub.SinkCredentials, sub.SinkCredentialFields = "", ps.credentialFields
	if ps.config.Credentials == nil {
		return nil
	}
	sealed, err := s.keys.Encrypt(ps.config.Credentials, sub.ID.String(), store.ColumnSinkCredentials)
	if err != nil {
		return fmt.Errorf("subscription %s: encrypt sink credentials: %w", sub.ID, err)
	}
	sub.SinkCredentials = sealed
	return nil
}

// --- verification ----------------------------------------------------------

// verifyChange runs the verification a new or re-pointed subscription gets
// and records its outcome. A caller that went away leaves the row pending
// (nothing was learnt about the destination); Verify can finish the job.
func (s *Subscriptions) verifyChange(ctx context.Context, sub store.Subscription) (store.Subscription, error) {
	failure, err := s.probe(ctx, sub)
	if ctx.Err() != nil {
		return sub, nil
	}
	if err != nil {
		return store.Subscription{}, err
	}
	recorded, err := s.recordVerification(ctx, sub, failure, false)
	return recorded, subscriptionError(sub.ID.String(), err)
}

// probe asks sub's destination whether it accepts us. failure is the
// destination's answer, to be recorded; err is a failure of the hub's own
// (a key it cannot decrypt with, a cancelled request), which says nothing
// about the destination and must not be recorded.
func (s *Subscriptions) probe(ctx context.Context, sub store.Subscription) (failure, err error) {
	t, cfg, secrets, err := s.sinkSetup(sub)
	if err != nil {
		return nil, err
	}
	snk, err := t.Open(cfg, secrets)
	if err != nil {
		return err, nil
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
func (s *Subscriptions) recordVerification(ctx context.Context, probed store.Subscription, failure error, recover bool) (store.Subscription, error) {
	now := s.now()
	return s.store.UpdateSubscription(ctx, probed.TenantID, probed.ID, now, func(sub *store.Subscription) error {
		if sub.Destination == probed.Destination && string(sub.SinkConfig) == string(probed.SinkConfig) &&
			sub.SinkCredentials == probed.SinkCredentials {
			applyVerification(sub, failure, recover, now)
		}
		return nil
	})
}

// applyVerification records a probe's outcome. recover is Verify's extra
// on success (SPEC §2.2): enable and clear what auto-disable left behind.
func applyVerification(sub *store.Subscription, failure error, recover bool, now time.Time) {
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
	if len(msg) > maxVerificationErrorBytes {
		cut := maxVerificationErrorBytes
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	if strings.TrimSpace(msg) == "" {
		return "the probe failed without saying why"
	}
	return msg
}

// --- views -------------------------------------------------------------------

func (s *Subscriptions) view(sub store.Subscription) (hubapi.Subscription, error) {
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
	if sub.VerificationState == match.VerificationFailed {
		v.VerificationError = sub.VerificationError
	}
	if sub.DisabledReason != "" {
		v.DisabledReason = &sub.DisabledReason
	}
	if sub.SigningSecret != "" {
		v.SigningSecret = hubapi.Masked
	}
	// After the overlap the old secret no longer signs, so there is no
	// overlap left to show.
	if previousSecretLive(sub, s.now()) {
		v.PreviousSecretExpiresAt = utcPtr(sub.PreviousSecretExpiresAt)
	}
	return v, nil
}

// maskedSink is the sink object as reads show it: the public configuration,
// its type, and "****" for each credential: in its place, for a type that
// keeps credentials inside another field (sink.CredentialMasker), else as a
// field of its own, unless the public part already describes it in a
// credential-free form. Either way it is an object the type's Parse takes
// back as it is.
func (s *Subscriptions) maskedSink(sub store.Subscription) (map[string]any, error) {
	var view map[string]any
	if t, err := s.sinks.Lookup(sub.SinkType); err == nil {
		if masker, ok := t.(sink.CredentialMasker); ok {
			if view, err = masker.MaskCredentials(sub.SinkConfig, sub.SinkCredentialFields); err != nil {
				return nil, fmt.Errorf("subscription %s: %w", sub.ID, err)
			}
		}
	}
	if view == nil {
		if err := json.Unmarshal(sub.SinkConfig, &view); err != nil || view == nil {
			return nil, fmt.Errorf("subscription %s: stored sink configuration is not a JSON object", sub.ID)
		}
		for _, field := range sub.SinkCredentialFields {
			if _, shown := view[field]; !shown {
				view[field] = hubapi.Masked
			}
		}
	}
	view["type"] = sub.SinkType
	return view, nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// --- input checks (no I/O) --------------------------------------------------

// sinkObject is a sink object of a type the registry knows, not yet parsed.
type sinkObject struct {
	typeName string
	typ      sink.Type
	raw      json.RawMessage
}

// parsedSink is a sink object the registry accepted.
type parsedSink struct {
	typeName         string
	config           sink.Config
	credentialFields []string
}

// createSpec is a validated hubapi.SubscriptionCreate: the row to insert,
// less what Create assigns (id, tenant, time, sealed secrets).
type createSpec struct {
	row  store.Subscription
	sink parsedSink
}

func (s *Subscriptions) checkCreate(in hubapi.SubscriptionCreate) (createSpec, error) {
	if err := checkText("name", in.Name, MaxSubscriptionNameChars); err != nil {
		return createSpec{}, err
	}
	object, err := s.lookupSink(in.Sink)
	if err != nil {
		return createSpec{}, err
	}
	ps, err := s.parseSink(object, nil)
	if err != nil {
		return createSpec{}, err
	}
	eventTypes, err := checkEventTypes(in.EventTypes)
	if err != nil {
		return createSpec{}, err
	}
	schemaMajor := 1
	if in.SchemaMajor != nil {
		if schemaMajor, err = checkSchemaMajor(*in.SchemaMajor); err != nil {
			return createSpec{}, err
		}
	}
	var origin string
	if in.Origin != nil {
		if origin, err = checkOrigin(*in.Origin); err != nil {
			return createSpec{}, err
		}
	}
	var expr string
	if in.Filter != nil {
		if expr, err = checkFilter(*in.Filter); err != nil {
			return createSpec{}, err
		}
	}
	if in.RetrySchedule != nil {
		if err := checkRetrySchedule(in.RetrySchedule); err != nil {
			return createSpec{}, err
		}
	}
	timeout := DefaultAttemptTimeout
	if in.AttemptTimeout != "" {
		if timeout, err = checkAttemptTimeout(in.AttemptTimeout); err != nil {
			return createSpec{}, err
		}
	}
	if in.SigningSecret != "" {
		if ps.typeName != sinkWebhook {
			return createSpec{}, invalid("signing_secret", "invalid signing_secret: only webhook subscriptions have one, this one has a %s sink", ps.typeName)
		}
		if in.SigningSecret == hubapi.Masked {
			return createSpec{}, invalid("signing_secret", "invalid signing_secret: %q is how reads mask a secret; leave signing_secret out to have the hub generate one", hubapi.Masked)
		}
		if err := checkSigningSecret(in.SigningSecret); err != nil {
			return createSpec{}, err
		}
	}
	enabled := true
	if in.Enabled != nil {
		enabled = *in.Enabled
	}
	return createSpec{sink: ps, row: store.Subscription{
		Name:              in.Name,
		SinkType:          ps.typeName,
		EventTypes:        eventTypes,
		SchemaMajor:       schemaMajor,
		Origin:            origin,
		Filter:            expr,
		RetrySchedule:     in.RetrySchedule,
		AttemptTimeout:    timeout,
		Enabled:           enabled,
		VerificationState: match.VerificationPending,
	}}, nil
}

// subscriptionPatch is a validated hubapi.SubscriptionUpdate.
type subscriptionPatch struct {
	name           *string
	sink           *sinkObject
	eventTypes     []string
	schemaMajor    *int
	origin         hubapi.Nullable[string]
	filter         hubapi.Nullable[string]
	retrySchedule  hubapi.Nullable[[]string]
	attemptTimeout *time.Duration
	enabled        *bool
	signingSecret  string
}

func (s *Subscriptions) checkUpdate(in hubapi.SubscriptionUpdate) (subscriptionPatch, error) {
	p := subscriptionPatch{name: in.Name, enabled: in.Enabled, origin: in.Origin, filter: in.Filter, retrySchedule: in.RetrySchedule}
	if in.Name != nil {
		if err := checkText("name", *in.Name, MaxSubscriptionNameChars); err != nil {
			return subscriptionPatch{}, err
		}
	}
	if in.Sink != nil {
		object, err := s.lookupSink(in.Sink)
		if err != nil {
			return subscriptionPatch{}, err
		}
		p.sink = &object
	}
	if in.EventTypes != nil {
		eventTypes, err := checkEventTypes(in.EventTypes)
		if err != nil {
			return subscriptionPatch{}, err
		}
		p.eventTypes = eventTypes
	}
	if in.SchemaMajor != nil {
		if _, err := checkSchemaMajor(*in.SchemaMajor); err != nil {
			return subscriptionPatch{}, err
		}
		p.schemaMajor = in.SchemaMajor
	}
	if in.Origin.Set && !in.Origin.Null {
		if _, err := checkOrigin(in.Origin.Value); err != nil {
			return subscriptionPatch{}, err
		}
	}
	if in.RetrySchedule.Set && !in.RetrySchedule.Null {
		if err := checkRetrySchedule(in.RetrySchedule.Value); err != nil {
			return subscriptionPatch{}, err
		}
	}
	if in.Filter.Set && !in.Filter.Null {
		if _, err := checkFilter(in.Filter.Value); err != nil {
			return subscriptionPatch{}, err
		}
	}
	if in.AttemptTimeout != nil {
		timeout, err := checkAttemptTimeout(*in.AttemptTimeout)
		if err != nil {
			return subscriptionPatch{}, err
		}
		p.attemptTimeout = &timeout
	}
	if in.SigningSecret != nil {
		if *in.SigningSecret != hubapi.Masked {
			if err := checkSigningSecret(*in.SigningSecret); err != nil {
				return subscriptionPatch{}, err
			}
		}
		p.signingSecret = *in.SigningSecret
	}
	return p, nil
}

// lookupSink finds the type of a sink object.
func (s *Subscriptions) lookupSink(raw json.RawMessage) (sinkObject, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return sinkObject{}, invalidSink("sink", "invalid sink: must be an object with a type, one of %s", strings.Join(s.sinks.Names(), ", "))
	}
	var typeName string
	if err := json.Unmarshal(fields["type"], &typeName); err != nil || typeName == "" {
		return sinkObject{}, invalidSink("sink.type", "invalid sink: type must be one of %s", strings.Join(s.sinks.Names(), ", "))
	}
	t, err := s.sinks.Lookup(typeName)
	if err != nil {
		return sinkObject{}, invalidSink("sink.type", "invalid sink: type %q is not one of %s", typeName, strings.Join(s.sinks.Names(), ", "))
	}
	return sinkObject{typeName: typeName, typ: t, raw: raw}, nil
}

// parseSink has the registry validate a sink object and split it. current
// is the configuration it replaces, credentials decrypted, or nil on
// create: a credential sent back as the mask reads show stands for its
// current value (restoreMasked), and on create for nothing, so it is
// refused rather than stored as the credential.
func (s *Subscriptions) parseSink(object sinkObject, current *sink.Config) (parsedSink, error) {
	var fieldErr *sink.FieldError
	raw, err := restoreMasked(object.typ, object.raw, current)
	if errors.As(err, &fieldErr) {
		return parsedSink{}, invalidSink(fieldErr.Field, "invalid sink: %s", fieldErr.Error())
	}
	if err != nil {
		// A stored configuration the type cannot read: the hub's fault.
		return parsedSink{}, fmt.Errorf("sink type %s: %w", object.typeName, err)
	}
	cfg, err := object.typ.Parse(raw)
	if err != nil {
		if errors.As(err, &fieldErr) && fieldErr.Field != "" {
			return parsedSink{}, invalidSink(fieldErr.Field, "invalid sink: %s", fieldErr.Error())
		}
		return parsedSink{}, invalidSink("sink", "invalid sink: %v", err)
	}
	// jsonb cannot hold a NUL in a string, and a value it rejects would
	// surface as a server error rather than as the user's mistake.
	if !isJSONObject(cfg.Public) || containsNUL(cfg.Public) || containsNUL(cfg.Credentials) {
		return parsedSink{}, invalidSink("sink", "invalid sink: values must not contain NUL characters")
	}
	var credentialFields []string
	if cfg.Credentials != nil {
		var credentials map[string]json.RawMessage
		if err := json.Unmarshal(cfg.Credentials, &credentials); err != nil || credentials == nil {
			return parsedSink{}, fmt.Errorf("sink type %s: credentials are not a JSON object", object.typeName)
		}
		credentialFields = make([]string, 0, len(credentials))
		for field := range credentials {
			credentialFields = append(credentialFields, field)
		}
		slices.Sort(credentialFields)
		for _, field := range credentialFields {
			if isMasked(credentials[field]) {
				return parsedSink{}, invalidSink("sink."+field, "invalid sink: %s is %q, which reads show in place of a credential: send the credential itself (an update may send the mask back to keep the current one)", field, hubapi.Masked)
			}
		}
	}
	return parsedSink{typeName: object.typeName, config: cfg, credentialFields: credentialFields}, nil
}

// restoreMasked returns raw with the credentials it sends as the mask
// replaced by current's values, in memory only, for Parse to validate and
// split as if the caller had sent them. A type whose credentials are fields
// of their own gets the generic treatment: a field of current's credentials
// sent as the mask takes its current value.
func restoreMasked(t sink.Type, raw json.RawMessage, current *sink.Config) (json.RawMessage, error) {
	if masker, ok := t.(sink.CredentialMasker); ok {
		return masker.RestoreMasked(raw, current)
	}
	if current == nil || current.Credentials == nil {
		return raw, nil
	}
	var fields, credentials map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return raw, nil // Parse says what is wrong with it
	}
	if err := json.Unmarshal(current.Credentials, &credentials); err != nil {
		return nil, errors.New("stored sink credentials are not a JSON object")
	}
	restored := false
	for field, value := range credentials {
		if isMasked(fields[field]) {
			fields[field], restored = value, true
		}
	}
	if !restored {
		return raw, nil
	}
	return json.Marshal(fields)
}

// isMasked reports whether a JSON value is the string reads show in place
// of a credential.
func isMasked(value json.RawMessage) bool {
	var text string
	return json.Unmarshal(value, &text) == nil && text == hubapi.Masked
}

func invalidSink(field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Code: CodeInvalidSink, Message: fmt.Sprintf(format, args...)}
}

func isJSONObject(raw json.RawMessage) bool {
	var object map[string]json.RawMessage
	return json.Unmarshal(raw, &object) == nil && object != nil
}

// containsNUL reports whether any string in a JSON value, key or element,
// holds a NUL character.
func containsNUL(raw json.RawMessage) bool {
	if raw == nil {
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			return strings.ContainsRune(v, 0)
		case []any:
			return slices.ContainsFunc(v, walk)
		case map[string]any:
			for k, e := range v {
				if strings.ContainsRune(k, 0) || walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// checkText accepts UTF-8 text without NULs (PostgreSQL text takes
// neither) of at most maxChars characters.
func checkText(field, value string, maxChars int) error {
	switch {
	case !utf8.ValidString(value):
		return invalid(field, "invalid %s: must be UTF-8 text", field)
	case strings.ContainsRune(value, 0):
		return invalid(field, "invalid %s: must not contain NUL characters", field)
	case utf8.RuneCountInString(value) > maxChars:
		return invalid(field, "invalid %s: at most %d characters", field, maxChars)
	}
	return nil
}

// checkEventTypes validates the patterns and drops repeats, keeping the
// first occurrence's place.
func checkEventTypes(patterns []string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, invalid("event_types", "invalid event_types: list at least one event type")
	}
	unique := make([]string, 0, len(patterns))
	for _, p := range patterns {
		if err := match.ValidatePattern(p); err != nil {
			return nil, invalid("event_types", "invalid event_types: %v", err)
		}
		if !slices.Contains(unique, p) {
			unique = append(unique, p)
		}
	}
	return unique, nil
}

func checkSchemaMajor(major int) (int, error) {
	if major < 1 || major > math.MaxInt32 {
		return 0, invalid("schema_major", "invalid schema_major %d: must be an integer of at least 1", major)
	}
	return major, nil
}

func checkOrigin(origin string) (string, error) {
	if origin == "" {
		return "", invalid("origin", "invalid origin: leave it out (or null) to match every source; when given it must not be empty")
	}
	if err := checkText("origin", origin, math.MaxInt); err != nil {
		return "", err
	}
	return origin, nil
}

// checkRetrySchedule accepts what dispatch will run: the schedule package
// owns the rule, so the API cannot accept a curve dispatch would ignore.
func checkRetrySchedule(steps []string) error {
	_, err := schedule.Parse(steps)
	if errors.Is(err, schedule.ErrInvalid) {
		return &ValidationError{Field: "retry_schedule", Code: CodeInvalidRetrySchedule, Message: err.Error()}
	}
	return err
}

// checkAttemptTimeout parses a timeout; it is stored in whole milliseconds,
// so a finer one is refused rather than silently rounded.
func checkAttemptTimeout(text string) (time.Duration, error) {
	d, err := time.ParseDuration(text)
	if err != nil {
		return 0, invalid("attempt_timeout", "invalid attempt_timeout %q: must be a Go duration such as 10s", text)
	}
	if d < MinAttemptTimeout || d > MaxAttemptTimeout || d%time.Millisecond != 0 {
		return 0, invalid("attempt_timeout", "invalid attempt_timeout %s: must be between %s and %s, in whole milliseconds", text, MinAttemptTimeout, MaxAttemptTimeout)
	}
	return d, nil
}

func checkSigningSecret(secret string) error {
	if err := checkText("signing_secret", secret, math.MaxInt); err != nil {
		return err
	}
	if utf8.RuneCountInString(secret) < MinSigningSecretChars {
		return invalid("signing_secret", "invalid signing_secret: at least %d characters", MinSigningSecretChars)
	}
	return nil
}

// --- cursors -------------------------------------------------------------------

// subscriptionsCursor names the subscription listing's cursors; a position
// is the last row's created_at in Unix microseconds and its id.
const subscriptionsCursor = "subscriptions"

func formatSubscriptionPosition(at time.Time, id uuid.UUID) string {
	return strconv.FormatInt(at.UnixMicro(), 10) + "." + id.String()
}

func parseSubscriptionPosition(position string) (*store.SubscriptionPosition, error) {
	microsText, idText, ok := strings.Cut(position, ".")
	if !ok {
		return nil, errBadCursor()
	}
	micros, err1 := strconv.ParseInt(microsText, 10, 64)
	id, err2 := uuid.Parse(idText)
	if err1 != nil || err2 != nil || micros < minCursorMicros || micros >= maxCursorMicros {
		return nil, errBadCursor()
	}
	return &store.SubscriptionPosition{CreatedAt: time.UnixMicro(micros).UTC(), ID: id}, nil
}
