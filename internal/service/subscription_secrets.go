package service

import (
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sinkopen"
	"github.com/hubctl/hubctl/internal/store"
)

// Sinks is the opener verification opens sinks with, for delivery to
// share: a destination is probed as it is delivered to.
func (s *Subscriptions) Sinks() *sinkopen.Opener { return s.opener }

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
		current, err := s.opener.Secret(sub.ID, sub.SigningSecret, store.ColumnSigningSecret)
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
