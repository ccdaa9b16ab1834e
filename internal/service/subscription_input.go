package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hubctl/hubctl/internal/clip"
	"github.com/hubctl/hubctl/internal/match"
	"github.com/hubctl/hubctl/internal/schedule"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/pkg/hubapi"
	whsign "github.com/hubctl/hubctl/pkg/webhook"
)

// Limits of the writable subscription fields (docs/concepts.md, Subscriptions).
const (
	MaxSubscriptionNameChars = 200
	MaxRetrySteps            = schedule.MaxSteps
	MaxRetryStep             = schedule.MaxStep
	MinAttemptTimeout        = sink.MinAttemptTimeout
	MaxAttemptTimeout        = sink.MaxAttemptTimeout
	DefaultAttemptTimeout    = sink.DefaultAttemptTimeout
	MinSigningSecretChars    = 24
)

// createSpec is a validated hubapi.SubscriptionCreate: the row to insert,
// less what Create assigns (id, tenant, time, sealed secrets).
type createSpec struct {
	row  catalog.Subscription
	sink sink.Parsed
}

func (s *Subscriptions) checkCreate(in hubapi.SubscriptionCreate) (createSpec, error) {
	if err := checkText("name", in.Name, MaxSubscriptionNameChars); err != nil {
		return createSpec{}, err
	}
	object, err := s.sinkObject(in.Sink)
	if err != nil {
		return createSpec{}, err
	}
	ps, err := parseSink(object, nil)
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
	if in.Ordering != "" {
		if err := checkOrdering(in.Ordering, ps.TypeName); err != nil {
			return createSpec{}, err
		}
	}
	var rateLimit float64
	if in.RateLimit != nil {
		if err := checkRateLimit(*in.RateLimit, ps.TypeName); err != nil {
			return createSpec{}, err
		}
		rateLimit = *in.RateLimit
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
	scheme := whsign.SchemeLerian
	if in.SignatureScheme != "" {
		if ps.TypeName != sinkWebhook {
			return createSpec{}, invalid("signature_scheme", "invalid signature_scheme: only webhook subscriptions sign, this one has a %s sink", ps.TypeName)
		}
		if scheme, err = checkSignatureScheme(in.SignatureScheme); err != nil {
			return createSpec{}, err
		}
	}
	if in.SigningSecret != "" {
		if ps.TypeName != sinkWebhook {
			return createSpec{}, invalid("signing_secret", "invalid signing_secret: only webhook subscriptions have one, this one has a %s sink", ps.TypeName)
		}
		if in.SigningSecret == hubapi.Masked {
			return createSpec{}, invalid("signing_secret", "invalid signing_secret: %q is how reads mask a secret; leave signing_secret out to have the hub generate one", hubapi.Masked)
		}
		if err := checkSigningSecret(in.SigningSecret, scheme); err != nil {
			return createSpec{}, err
		}
	}
	enabled := true
	if in.Enabled != nil {
		enabled = *in.Enabled
	}
	return createSpec{sink: ps, row: catalog.Subscription{
		Name:              in.Name,
		SinkType:          ps.TypeName,
		EventTypes:        eventTypes,
		SchemaMajor:       schemaMajor,
		Origin:            origin,
		Filter:            expr,
		Ordering:          orderingOf(in.Ordering),
		RateLimit:         rateLimit,
		RetrySchedule:     in.RetrySchedule,
		AttemptTimeout:    timeout,
		Enabled:           enabled,
		VerificationState: match.VerificationPending,
		SignatureScheme:   scheme,
	}}, nil
}

// subscriptionPatch is a validated hubapi.SubscriptionUpdate.
type subscriptionPatch struct {
	name           *string
	sink           *sink.Object
	eventTypes     []string
	schemaMajor    *int
	origin         hubapi.Nullable[string]
	filter         hubapi.Nullable[string]
	ordering       *string
	rateLimit      hubapi.Nullable[float64]
	retrySchedule  hubapi.Nullable[[]string]
	attemptTimeout *time.Duration
	enabled        *bool
	signingSecret  string
	// signatureScheme is "" when the patch leaves the scheme alone.
	signatureScheme string
}

func (s *Subscriptions) checkUpdate(in hubapi.SubscriptionUpdate) (subscriptionPatch, error) {
	p := subscriptionPatch{name: in.Name, enabled: in.Enabled, origin: in.Origin, filter: in.Filter,
		ordering: in.Ordering, rateLimit: in.RateLimit, retrySchedule: in.RetrySchedule}
	if in.Name != nil {
		if err := checkText("name", *in.Name, MaxSubscriptionNameChars); err != nil {
			return subscriptionPatch{}, err
		}
	}
	if in.Sink != nil {
		object, err := s.sinkObject(in.Sink)
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
	// The sink type is the row's: applyPatch refuses these for pull.
	if in.Ordering != nil {
		if err := checkOrdering(*in.Ordering, ""); err != nil {
			return subscriptionPatch{}, err
		}
	}
	if in.RateLimit.Set && !in.RateLimit.Null {
		if err := checkRateLimit(in.RateLimit.Value, ""); err != nil {
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
	if in.SignatureScheme != nil {
		scheme, err := checkSignatureScheme(*in.SignatureScheme)
		if err != nil {
			return subscriptionPatch{}, err
		}
		p.signatureScheme = scheme
	}
	if in.SigningSecret != nil {
		// The secret's form depends on the scheme it will sign in, which
		// only the row knows when the patch does not say: applyPatch checks
		// that part.
		if *in.SigningSecret != hubapi.Masked {
			if err := checkSigningSecret(*in.SigningSecret, whsign.SchemeLerian); err != nil {
				return subscriptionPatch{}, err
			}
		}
		p.signingSecret = *in.SigningSecret
	}
	return p, nil
}

// sinkObject finds the type of a sink object.
func (s *Subscriptions) sinkObject(raw json.RawMessage) (sink.Object, error) {
	object, err := s.sinks.Object(raw)
	return object, sinkInputError(err)
}

// parseSink has the object's type validate and split it; current is as
// for sink.Object.Parse.
func parseSink(object sink.Object, current *sink.Config) (sink.Parsed, error) {
	ps, err := object.Parse(current)
	return ps, sinkInputError(err)
}

// sinkInputError makes a mistake in the caller's sink object a 400
// invalid_sink; any other error is the hub's own.
func sinkInputError(err error) error {
	var bad *sink.InvalidError
	if errors.As(err, &bad) {
		return invalidSink(bad.Field, "invalid sink: %s", bad.Message)
	}
	return err
}

func invalidSink(field, format string, args ...any) *hubapi.ValidationError {
	return &hubapi.ValidationError{Field: field, Code: CodeInvalidSink, Message: fmt.Sprintf(format, args...)}
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
		return &hubapi.ValidationError{Field: "retry_schedule", Code: CodeInvalidRetrySchedule, Message: err.Error()}
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

// MaxRateLimit bounds rate_limit (deliveries per second), as the
// database does.
const MaxRateLimit = 100000

// checkOrdering accepts one of match.Orderings for a push subscription;
// sinkType "" is checked later, against the row.
func checkOrdering(mode, sinkType string) error {
	if !match.ValidOrdering(mode) {
		return invalid("ordering", "invalid ordering %q: must be one of %s", mode, strings.Join(match.Orderings, ", "))
	}
	if sinkType == sinkPull && mode != match.OrderingNone {
		return invalid("ordering", "invalid ordering: a pull subscription is read in seq order already; ordering is for push sinks")
	}
	return nil
}

// checkRateLimit accepts a positive number of deliveries per second for a
// push subscription; sinkType "" is checked later, against the row.
func checkRateLimit(perSecond float64, sinkType string) error {
	if !(perSecond > 0 && perSecond <= MaxRateLimit) {
		return invalid("rate_limit", "invalid rate_limit %v: must be deliveries per second, more than 0 and at most %d", perSecond, MaxRateLimit)
	}
	if sinkType == sinkPull {
		return invalid("rate_limit", "invalid rate_limit: a pull subscription is read at the reader's pace; rate_limit is for push sinks")
	}
	return nil
}

// orderingOf is how the store keeps a mode: "" for none.
func orderingOf(mode string) string {
	if mode == match.OrderingNone {
		return ""
	}
	return mode
}

// checkSigningSecret accepts a caller's secret for scheme: any text of at
// least MinSigningSecretChars characters for lerian; for standard-webhooks
// only what the official libraries decode, "whsec_" and the standard
// base64 of 24 to 64 bytes.
func checkSigningSecret(secret, scheme string) error {
	if err := checkText("signing_secret", secret, math.MaxInt); err != nil {
		return err
	}
	if utf8.RuneCountInString(secret) < MinSigningSecretChars {
		return invalid("signing_secret", "invalid signing_secret: at least %d characters", MinSigningSecretChars)
	}
	if scheme == whsign.SchemeStandardWebhooks {
		if _, err := whsign.DecodeStandardSecret(secret); err != nil {
			return invalid("signing_secret", `invalid signing_secret: a standard-webhooks secret is "%s" followed by the standard base64 of %d to %d bytes`,
				whsign.StandardSecretPrefix, whsign.MinStandardKeyBytes, whsign.MaxStandardKeyBytes)
		}
	}
	return nil
}

// checkSignatureScheme accepts the names of the schemes webhooks sign in
// (docs/api.md, Signature schemes).
func checkSignatureScheme(scheme string) (string, error) {
	switch scheme {
	case whsign.SchemeLerian, whsign.SchemeStandardWebhooks:
		return scheme, nil
	}
	return "", invalid("signature_scheme", "invalid signature_scheme %q: must be %q or %q",
		clipForMessage(scheme), whsign.SchemeLerian, whsign.SchemeStandardWebhooks)
}

// clipForMessage keeps a caller's value short and printable in an error.
func clipForMessage(value string) string {
	return clip.String(strings.ToValidUTF8(value, "\uFFFD"), 64)
}
