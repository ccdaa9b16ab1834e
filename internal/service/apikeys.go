package service

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// CodeAPIKeyNotFound answers for a key that does not exist or belongs to
// another tenant.
const CodeAPIKeyNotFound = "api_key_not_found"

const (
	// MaxAPIKeyNameLength matches the tenant_api_keys.name constraint.
	MaxAPIKeyNameLength = 200
	// apiKeyPrefixLength is how much of a token is kept in the clear to
	// recognise it: "hub_" and 8 random characters, 48 of its 256 bits,
	// leaving 208 secret.
	apiKeyPrefixLength = len(crypto.APITokenPrefix) + 8
	// maxAPITokenLength bounds what is worth hashing and looking up; a
	// hub token is 47 characters.
	maxAPITokenLength = 256
	// lastUseResolution is how stale a key's last_used_at may get: the
	// field tells operators which keys are still in use, for which a minute
	// is plenty, and it costs one write per key per minute at most.
	lastUseResolution = time.Minute
	apiKeysCursor     = "api_keys"
)

// KeyHolder is who a token authenticates.
type KeyHolder struct {
	TenantID string
	KeyID    string
}

func apiKeyView(k catalog.APIKey) hubapi.APIKey {
	return hubapi.APIKey{
		ID:         k.ID,
		Name:       k.Name,
		Prefix:     k.TokenPrefix,
		CreatedAt:  k.CreatedAt.UTC(),
		LastUsedAt: utcOrNil(k.LastUsedAt),
		RevokedAt:  utcOrNil(k.RevokedAt),
	}
}

func utcOrNil(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// APIKeys issues, lists, revokes and checks tenant API keys. Keys are
// stored as hashes (crypto.HashAPIToken), so a token is shown once, on
// creation, and can be replaced but never recovered.
type APIKeys struct {
	store *catalog.Store
	now   func() time.Time
}

// NewAPIKeys returns the API key use cases over st; now stamps creation,
// revocation and last use.
func NewAPIKeys(st *catalog.Store, now func() time.Time) *APIKeys {
	return &APIKeys{store: st, now: now}
}

// CheckAPIKeyName rejects a name the key could not be stored or shown with:
// empty, too long, not UTF-8, or holding control characters (which would
// garble tables and which PostgreSQL refuses when NUL).
func CheckAPIKeyName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return invalid("name", "invalid API key name: it is required and must not be blank")
	case !utf8.ValidString(name):
		return invalid("name", "invalid API key name: it must be UTF-8 text")
	case utf8.RuneCountInString(name) > MaxAPIKeyNameLength:
		return invalid("name", "invalid API key name: at most %d characters", MaxAPIKeyNameLength)
	case strings.ContainsFunc(name, unicode.IsControl):
		return invalid("name", "invalid API key name: it must not contain control characters")
	}
	return nil
}

// checkAPIKeyID rejects a key id that no key could have, before it reaches
// the database as a malformed uuid.
func checkAPIKeyID(id string) error {
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return invalid("key_id", "invalid API key id %q: must be a UUID such as 0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b", id)
	}
	return nil
}

// Create issues a key for a tenant. The token is in the result and nowhere
// else.
func (s *APIKeys) Create(ctx context.Context, tenantID, name string) (hubapi.CreatedAPIKey, error) {
	if err := hubapi.CheckTenantID(tenantID); err != nil {
		return hubapi.CreatedAPIKey{}, err
	}
	if err := CheckAPIKeyName(name); err != nil {
		return hubapi.CreatedAPIKey{}, err
	}
	token, hash, err := crypto.NewAPIToken()
	if err != nil {
		return hubapi.CreatedAPIKey{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return hubapi.CreatedAPIKey{}, fmt.Errorf("new API key id: %w", err)
	}
	k, err := s.store.CreateAPIKey(ctx, catalog.NewAPIKey{
		ID:          id.String(),
		TenantID:    tenantID,
		Name:        name,
		TokenHash:   hash,
		TokenPrefix: token[:apiKeyPrefixLength],
		CreatedAt:   s.now(),
	})
	if err != nil {
		return hubapi.CreatedAPIKey{}, tenantError(tenantID, err)
	}
	return hubapi.CreatedAPIKey{ID: k.ID, Name: k.Name, Key: token, Prefix: k.TokenPrefix, CreatedAt: k.CreatedAt.UTC()}, nil
}

// List pages through a tenant's keys, revoked ones included, oldest first.
func (s *APIKeys) List(ctx context.Context, tenantID string, p hubapi.ListParams) (hubapi.Page[hubapi.APIKey], error) {
	if err := hubapi.CheckTenantID(tenantID); err != nil {
		return hubapi.Page[hubapi.APIKey]{}, err
	}
	limit, err := pageLimit(p.Limit)
	if err != nil {
		return hubapi.Page[hubapi.APIKey]{}, err
	}
	after, err := positionAfter(apiKeysCursor, p.Cursor, parseAPIKeyPosition)
	if err != nil {
		return hubapi.Page[hubapi.APIKey]{}, err
	}
	// An unknown tenant has no keys, but saying so would hide a typo:
	// the listing answers tenant_not_found instead.
	if _, err := s.store.GetTenant(ctx, tenantID); err != nil {
		return hubapi.Page[hubapi.APIKey]{}, tenantError(tenantID, err)
	}
	rows, more, err := s.store.ListAPIKeys(ctx, tenantID, after, limit)
	if err != nil {
		return hubapi.Page[hubapi.APIKey]{}, err
	}
	return pageOf(rows, more, apiKeyView, apiKeysCursor, func(last catalog.APIKey) string {
		return formatAPIKeyPosition(last.CreatedAt, last.ID)
	}), nil
}

// Revoke stops a key from authenticating, at once and for good. Revoking a
// revoked key succeeds and keeps the first revocation time. Another
// tenant's key answers api_key_not_found, exactly like a missing one.
func (s *APIKeys) Revoke(ctx context.Context, tenantID, keyID string) (hubapi.APIKey, error) {
	if err := hubapi.CheckTenantID(tenantID); err != nil {
		return hubapi.APIKey{}, err
	}
	if err := checkAPIKeyID(keyID); err != nil {
		return hubapi.APIKey{}, err
	}
	k, err := s.store.RevokeAPIKey(ctx, tenantID, keyID, s.now())
	if errors.Is(err, pg.ErrNotFound) {
		// Only on this path is it worth a second look: a missing tenant
		// deserves its own answer.
		if _, tenantErr := s.store.GetTenant(ctx, tenantID); tenantErr != nil {
			return hubapi.APIKey{}, tenantError(tenantID, tenantErr)
		}
		return hubapi.APIKey{}, &hubapi.NotFoundError{Code: CodeAPIKeyNotFound, Message: fmt.Sprintf("API key %s of tenant %q not found", keyID, tenantID), Err: err}
	}
	if err != nil {
		return hubapi.APIKey{}, err
	}
	return apiKeyView(k), nil
}

// Authenticate says which tenant a token acts for: hubapi.ErrInvalidAPIKey for a
// token that is not a live key, hubapi.ErrTenantInactive when its tenant is
// inactive, a store error (ErrUnavailable) when the answer is unknown.
func (s *APIKeys) Authenticate(ctx context.Context, token string) (KeyHolder, error) {
	if !plausibleAPIToken(token) {
		return KeyHolder{}, hubapi.ErrInvalidAPIKey
	}
	h, err := s.store.AuthenticateAPIKey(ctx, crypto.HashAPIToken(token), s.now(), lastUseResolution)
	switch {
	case errors.Is(err, pg.ErrNotFound):
		return KeyHolder{}, hubapi.ErrInvalidAPIKey
	case err != nil:
		return KeyHolder{}, err
	case h.Key.RevokedAt != nil:
		return KeyHolder{}, hubapi.ErrInvalidAPIKey
	case h.TenantStatus != catalog.TenantActive:
		return KeyHolder{}, hubapi.ErrTenantInactive
	}
	return KeyHolder{TenantID: h.Key.TenantID, KeyID: h.Key.ID}, nil
}

// plausibleAPIToken turns away, without a database round trip, tokens no
// key could have: another scheme's credential, a pasted blob.
func plausibleAPIToken(token string) bool {
	return strings.HasPrefix(token, crypto.APITokenPrefix) && len(token) <= maxAPITokenLength
}

// An API key position is its created_at in Unix microseconds and its id.
func formatAPIKeyPosition(at time.Time, id string) string {
	return strconv.FormatInt(at.UnixMicro(), 10) + "." + id
}

func parseAPIKeyPosition(position string) (*catalog.APIKeyPosition, error) {
	microsText, id, ok := strings.Cut(position, ".")
	if !ok {
		return nil, errBadCursor()
	}
	micros, err := strconv.ParseInt(microsText, 10, 64)
	if err != nil || micros < minCursorMicros || micros >= maxCursorMicros || checkAPIKeyID(id) != nil {
		return nil, errBadCursor()
	}
	return &catalog.APIKeyPosition{CreatedAt: time.UnixMicro(micros).UTC(), ID: id}, nil
}
