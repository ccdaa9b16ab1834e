package service

import (
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sinkopen"
	"github.com/hubctl/hubctl/internal/store/catalog"
	whsign "github.com/hubctl/hubctl/pkg/webhook"
)

// Sinks is the opener verification opens sinks with, for delivery to
// share: a destination is probed as it is delivered to.
func (s *Subscriptions) Sinks() *sinkopen.Opener { return s.opener }

// rotate makes secret the current one, signing in scheme. The current
// secret becomes the previous one whatever the previous was, which is how a
// second rotation inside an overlap drops the oldest; it keeps signing in
// its own scheme, so across a switch of scheme a receiver still verifying
// the old way goes on accepting deliveries until the overlap ends
// (docs/api.md, Signature schemes). Envelopes are bound to their column,
// so the old secret is re-sealed for previous_secret rather than moved.
func (s *Subscriptions) rotate(sub *catalog.Subscription, secret, scheme string, now time.Time) error {
	sealed, err := s.seal(secret, sub.ID, catalog.ColumnSigningSecret)
	if err != nil {
		return err
	}
	sub.PreviousSecret, sub.PreviousSecretExpiresAt, sub.PreviousSignatureScheme = "", nil, ""
	if s.overlap > 0 {
		if scheme != sub.SignatureScheme {
			sub.PreviousSignatureScheme = sub.SignatureScheme
		}
		current, err := s.opener.Secret(sub.ID, sub.SigningSecret, catalog.ColumnSigningSecret)
		if err != nil {
			return err
		}
		if sub.PreviousSecret, err = s.seal(current, sub.ID, catalog.ColumnPreviousSecret); err != nil {
			return err
		}
		expires := now.Add(s.overlap)
		sub.PreviousSecretExpiresAt = &expires
	}
	sub.SigningSecret, sub.SignatureScheme = sealed, scheme
	return nil
}

// newSecret generates a signing secret of scheme.
func newSecret(scheme string) (string, error) {
	if scheme == whsign.SchemeStandardWebhooks {
		return crypto.RandomStandardSecret()
	}
	return crypto.RandomSecret()
}

// secretFor is the secret a rotation of a subscription signing in scheme
// moves to: the caller's, if it suits the scheme, else a generated one.
func secretFor(scheme, callers string) (string, error) {
	if callers == "" {
		return newSecret(scheme)
	}
	return callers, checkSigningSecret(callers, scheme)
}

func (s *Subscriptions) seal(plaintext string, id uuid.UUID, column string) (string, error) {
	sealed, err := s.keys.Encrypt([]byte(plaintext), id.String(), column)
	if err != nil {
		return "", fmt.Errorf("subscription %s: encrypt %s: %w", id, column, err)
	}
	return sealed, nil
}

// sealSink stores a parsed sink configuration on sub, credentials sealed.
func (s *Subscriptions) sealSink(sub *catalog.Subscription, ps sink.Parsed) error {
	sub.SinkConfig = ps.Config.Public
	sub.Destination = ps.Config.Destination
	sub.SinkCredentials, sub.SinkCredentialFields = "", ps.CredentialFields
	if ps.Config.Credentials == nil {
		return nil
	}
	sealed, err := s.keys.Encrypt(ps.Config.Credentials, sub.ID.String(), catalog.ColumnSinkCredentials)
	if err != nil {
		return fmt.Errorf("subscription %s: encrypt sink credentials: %w", sub.ID, err)
	}
	sub.SinkCredentials = sealed
	return nil
}
