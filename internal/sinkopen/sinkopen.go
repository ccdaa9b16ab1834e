// Package sinkopen opens the sink of a stored subscription: it decrypts the
// sink's credentials and the webhook signing secrets, in memory only, and
// hands them to the subscription's sink type. Verification (internal/service)
// and delivery (internal/dispatch) share it, so a destination is probed
// exactly as it is delivered to.
package sinkopen

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/store/catalog"
)

// Opener opens sinks of stored subscriptions. It holds no state of its own.
type Opener struct {
	keys  *crypto.Keyring
	sinks *sink.Registry
	now   func() time.Time
}

// New returns an opener; keys unseal what the subscription service sealed,
// and now decides whether a rotated-out secret still signs (nil means
// time.Now).
func New(keys *crypto.Keyring, sinks *sink.Registry, now func() time.Time) *Opener {
	if now == nil {
		now = time.Now
	}
	return &Opener{keys: keys, sinks: sinks, now: now}
}

// RefusedError is the sink type refusing a configuration it once accepted:
// something about the destination, to be reported like a failed delivery.
// Every other error of Open is the hub's own (a key it cannot decrypt with,
// a type nobody registered) and says nothing about the destination.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Open builds sub's sink with its credentials and signing secrets
// decrypted. The caller closes it.
func (o *Opener) Open(sub catalog.Subscription) (sink.Sink, error) {
	t, err := o.sinks.Lookup(sub.SinkType)
	if err != nil {
		return nil, fmt.Errorf("subscription %s: %w", sub.ID, err)
	}
	cfg, err := o.Config(sub)
	if err != nil {
		return nil, err
	}
	secrets, err := o.SigningSecrets(sub)
	if err != nil {
		return nil, err
	}
	s, err := t.Open(cfg, secrets)
	if err != nil {
		return nil, &RefusedError{Err: err}
	}
	return s, nil
}

// IsRefused reports whether an error of Open is the sink type's refusal.
func IsRefused(err error) bool {
	var refused *RefusedError
	return errors.As(err, &refused)
}

// Config is sub's sink configuration with its credentials decrypted.
func (o *Opener) Config(sub catalog.Subscription) (sink.Config, error) {
	cfg := sink.Config{Public: sub.SinkConfig, Destination: sub.Destination, SignatureScheme: sub.SignatureScheme}
	if PreviousSecretSigns(sub, o.now()) {
		cfg.PreviousSignatureScheme = sub.PreviousSignatureScheme
	}
	if sub.SinkCredentials != "" {
		var err error
		if cfg.Credentials, err = o.keys.Decrypt(sub.SinkCredentials, sub.ID.String(), catalog.ColumnSinkCredentials); err != nil {
			return sink.Config{}, fmt.Errorf("subscription %s: decrypt sink credentials: %w", sub.ID, err)
		}
	}
	return cfg, nil
}

// SigningSecrets returns the secrets a delivery to sub is signed with,
// newest first: the current one, and the previous one until its overlap
// ends. Non-webhook subscriptions have none.
func (o *Opener) SigningSecrets(sub catalog.Subscription) ([]string, error) {
	if sub.SigningSecret == "" {
		return nil, nil
	}
	current, err := o.Secret(sub.ID, sub.SigningSecret, catalog.ColumnSigningSecret)
	if err != nil {
		return nil, err
	}
	secrets := []string{current}
	if !PreviousSecretSigns(sub, o.now()) {
		return secrets, nil
	}
	previous, err := o.Secret(sub.ID, sub.PreviousSecret, catalog.ColumnPreviousSecret)
	if err != nil {
		return nil, err
	}
	return append(secrets, previous), nil
}

// Secret decrypts one sealed secret of subscription id, stored in column.
func (o *Opener) Secret(id uuid.UUID, envelope, column string) (string, error) {
	plaintext, err := o.keys.Decrypt(envelope, id.String(), column)
	if err != nil {
		return "", fmt.Errorf("subscription %s: decrypt %s: %w", id, column, err)
	}
	return string(plaintext), nil
}

// PreviousSecretSigns reports whether sub's rotated-out secret still signs
// at now: the rotation overlap has not ended.
func PreviousSecretSigns(sub catalog.Subscription, now time.Time) bool {
	return sub.PreviousSecret != "" && sub.PreviousSecretExpiresAt != nil && now.Before(*sub.PreviousSecretExpiresAt)
}
