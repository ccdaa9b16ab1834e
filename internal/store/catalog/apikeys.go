package catalog

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// APIKey is one tenant API key as stored: never the token itself, only its
// hash (which is not kept in this struct, so it cannot leak through a view)
// and a short prefix people can recognise it by.
type APIKey struct {
	ID          string
	TenantID    string
	Name        string
	TokenPrefix string
	CreatedAt   time.Time
	// LastUsedAt is nil until the key first authenticates a request.
	LastUsedAt *time.Time
	// RevokedAt is nil while the key is live.
	RevokedAt *time.Time
}

// NewAPIKey is what CreateAPIKey inserts. ID must be a UUID.
type NewAPIKey struct {
	ID          string
	TenantID    string
	Name        string
	TokenHash   []byte
	TokenPrefix string
	CreatedAt   time.Time
}

// APIKeyPosition is where a page of a tenant's keys ends; keys are listed by
// (created_at, id), the order of tenant_api_keys_by_tenant.
type APIKeyPosition struct {
	CreatedAt time.Time
	ID        string
}

// KeyHolder is what authenticating a token yields: the key and the status
// its tenant has at that moment.
type KeyHolder struct {
	Key          APIKey
	TenantStatus TenantStatus
}

func scanAPIKey(row pgx.Row) (APIKey, error) {
	var k APIKey
	err := row.Scan(&k.ID, &k.TenantID, &k.Name, &k.TokenPrefix, &k.CreatedAt, &k.LastUsedAt, &k.RevokedAt)
	return k, err
}

// CreateAPIKey stores a new key of an existing tenant. A missing tenant is
// an pg.ErrNotFound naming it; a token hash already stored (which 256 random
// bits make a bug, not bad luck) is an pg.ErrConflict.
func (s *Store) CreateAPIKey(ctx context.Context, k NewAPIKey) (APIKey, error) {
	// Inserting from the tenant row, rather than relying on the foreign key,
	// turns "no such tenant" into an empty result instead of a constraint
	// violation that would abort a surrounding transaction.
	key, err := scanAPIKey(s.Pool.QueryRow(ctx, createAPIKeySQL,
		pgx.StrictNamedArgs{"id": k.ID, "tenant_id": k.TenantID, "name": k.Name, "token_hash": k.TokenHash, "token_prefix": k.TokenPrefix, "created_at": k.CreatedAt}))
	if errors.Is(err, pgx.ErrNoRows) {
		return APIKey{}, pg.TenantNotFound(k.TenantID)
	}
	if err != nil {
		return APIKey{}, pg.Classify(fmt.Errorf("create API key for tenant %q: %w", k.TenantID, err))
	}
	return key, nil
}

// ListAPIKeys returns up to limit keys of a tenant, revoked ones included,
// oldest first, starting after `after` (nil starts at the beginning). more
// reports whether keys follow the last one returned. It does not check that
// the tenant exists: an unknown tenant simply has no keys.
func (s *Store) ListAPIKeys(ctx context.Context, tenantID string, after *APIKeyPosition, limit int) (keys []APIKey, more bool, err error) {
	if limit < 1 {
		return nil, false, fmt.Errorf("list API keys: limit %d must be at least 1", limit)
	}
	// A NULL position compares as unknown, so the row comparison is guarded
	// rather than fed a sentinel time.
	var afterAt *time.Time
	var afterID *string
	if after != nil {
		afterAt, afterID = &after.CreatedAt, &after.ID
	}
	rows, err := s.Pool.Query(ctx, listAPIKeysSQL,
		pgx.StrictNamedArgs{"tenant_id": tenantID, "after_at": afterAt, "after_id": afterID, "limit": limit + 1})
	if err != nil {
		return nil, false, pg.Classify(fmt.Errorf("list API keys of tenant %q: %w", tenantID, err))
	}
	keys, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (APIKey, error) { return scanAPIKey(r) })
	if err != nil {
		return nil, false, pg.Classify(fmt.Errorf("list API keys of tenant %q: %w", tenantID, err))
	}
	if len(keys) > limit {
		return keys[:limit], true, nil
	}
	return keys, false, nil
}

// RevokeAPIKey stops a key from authenticating from `at` on. The key must
// belong to tenantID: another tenant's key is pg.ErrNotFound, exactly like a
// missing one. Revoking a revoked key keeps its first revocation time.
func (s *Store) RevokeAPIKey(ctx context.Context, tenantID, keyID string, at time.Time) (APIKey, error) {
	key, err := scanAPIKey(s.Pool.QueryRow(ctx, revokeAPIKeySQL,
		pgx.StrictNamedArgs{"key_id": keyID, "tenant_id": tenantID, "at": at}))
	if errors.Is(err, pgx.ErrNoRows) {
		return APIKey{}, fmt.Errorf("%w: API key %s of tenant %q", pg.ErrNotFound, keyID, tenantID)
	}
	if err != nil {
		return APIKey{}, pg.Classify(fmt.Errorf("revoke API key %s of tenant %q: %w", keyID, tenantID, err))
	}
	return key, nil
}

// AuthenticateAPIKey finds the key whose token hashes to tokenHash, revoked
// or not (the caller decides what a revoked key means), with its tenant's
// status; pg.ErrNotFound when no key has that hash.
//
// In the same statement it records now as the key's last use when the
// recorded one is older than touchEvery, so a busy key costs one write per
// interval rather than one per request. The returned LastUsedAt is the value
// before this request.
func (s *Store) AuthenticateAPIKey(ctx context.Context, tokenHash []byte, now time.Time, touchEvery time.Duration) (KeyHolder, error) {
	var h KeyHolder
	k := &h.Key
	err := s.Pool.QueryRow(ctx, authenticateAPIKeySQL,
		pgx.StrictNamedArgs{"token_hash": tokenHash, "now": now, "touch_every": touchEvery}).Scan(
		&k.ID, &k.TenantID, &k.Name, &k.TokenPrefix, &k.CreatedAt, &k.LastUsedAt, &k.RevokedAt, &h.TenantStatus)
	if errors.Is(err, pgx.ErrNoRows) {
		return KeyHolder{}, fmt.Errorf("%w: no API key has that token", pg.ErrNotFound)
	}
	if err != nil {
		return KeyHolder{}, pg.Classify(fmt.Errorf("authenticate API key: %w", err))
	}
	return h, nil
}

//go:embed sql/create_api_key.sql
var createAPIKeySQL string

//go:embed sql/list_api_keys.sql
var listAPIKeysSQL string

//go:embed sql/revoke_api_key.sql
var revokeAPIKeySQL string

//go:embed sql/authenticate_api_key.sql
var authenticateAPIKeySQL string
