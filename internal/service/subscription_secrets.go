package service

import (
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/store"
)

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
func (s *Subscriptions) sealSink(sub *store.Subscription, ps sink.Parsed) error {
	sub.SinkConfig = ps.Config.Public
	sub.Destination = ps.Config.Destination
	sub.SinkCredentials, sub.SinkCredentialFields = "", ps.CredentialFields
	if ps.Config.Credentials == nil {
		return nil
	}
	sealed, err := s.keys.Encrypt(ps.Config.Credentials, sub.ID.String(), store.ColumnSinkCredentials)
	if err != nil {
		return fmt.Errorf("subscription %s: encrypt sink credentials: %w", sub.ID, err)
	}
	sub.SinkCredentials = sealed
	return nil
}
