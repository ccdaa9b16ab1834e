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

// IdempotencyWindow is how long a stored Idempotency-Key answers for its
// request (docs/api.md, Idempotent requests); retention deletes older rows.
const IdempotencyWindow = 24 * time.Hour

// IdempotencyRecord is one stored Idempotency-Key: the claim of a request
// in progress, or its finished response.
type IdempotencyRecord struct {
	Scope, Key  string
	Fingerprint []byte
	Done        bool
	Status      int
	Location    string
	// Response is the body sealed by the caller (internal/service); the
	// store never sees it in the clear.
	Response  string
	CreatedAt time.Time
}

// ClaimIdempotencyKey inserts the claim of scope/key in a transaction of
// its own; tenant is the tenant the request acts on ("" for none), whose
// purge removes the row, so every concurrent duplicate sees it at once. claimed is true
// when this call owns the key: the key was free, or its row is one to take
// over: created before expiredBefore (past the window, which retention has
// not deleted yet) or an unfinished claim created before abandonedBefore
// (its process died mid-request). Otherwise the existing row is returned
// and the caller decides (service.DecideIdempotent).
func (s *Store) ClaimIdempotencyKey(ctx context.Context, scope, key, tenant string, fingerprint []byte, now, expiredBefore, abandonedBefore time.Time) (claimed bool, existing IdempotencyRecord, err error) {
	err = pg.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		var got bool
		err := tx.QueryRow(ctx, claimIdempotencyKeySQL,
			pgx.NamedArgs{"scope": scope, "key": key, "tenant": tenant, "fingerprint": fingerprint, "now": now,
				"expired": expiredBefore, "abandoned": abandonedBefore}).Scan(&got)
		if err == nil {
			claimed = true
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		existing, err = readIdempotencyKey(ctx, tx, scope, key)
		return err
	})
	if err != nil {
		return false, IdempotencyRecord{}, pg.Classify(fmt.Errorf("claim idempotency key: %w", err))
	}
	return claimed, existing, nil
}

// ReadIdempotencyKey reads the row of scope/key; pg.ErrNotFound when there is
// none (its claim was released).
func (s *Store) ReadIdempotencyKey(ctx context.Context, scope, key string) (IdempotencyRecord, error) {
	r, err := readIdempotencyKey(ctx, s.Pool, scope, key)
	if err != nil {
		return IdempotencyRecord{}, pg.Classify(fmt.Errorf("read idempotency key: %w", err))
	}
	return r, nil
}

func readIdempotencyKey(ctx context.Context, q pg.Querier, scope, key string) (IdempotencyRecord, error) {
	r := IdempotencyRecord{Scope: scope, Key: key}
	var status *int
	var location, response *string
	err := q.QueryRow(ctx, readIdempotencyKeySQL, pgx.StrictNamedArgs{"scope": scope, "key": key}).
		Scan(&r.Fingerprint, &r.Done, &status, &location, &response, &r.CreatedAt)
	if status != nil {
		r.Status = *status
	}
	if location != nil {
		r.Location = *location
	}
	if response != nil {
		r.Response = *response
	}
	return r, err
}

// CompleteIdempotencyKey stores the response of the claim scope/key made
// at claimedAt. A claim taken over meanwhile (another created_at) is left
// alone.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, scope, key string, claimedAt time.Time, status int, location, sealedResponse string) error {
	_, err := s.Pool.Exec(ctx, completeIdempotencyKeySQL,
		pgx.StrictNamedArgs{"scope": scope, "key": key, "claimed_at": claimedAt, "status": status, "location": location, "sealed_response": sealedResponse})
	if err != nil {
		return pg.Classify(fmt.Errorf("store idempotent response: %w", err))
	}
	return nil
}

// ReleaseIdempotencyKey deletes the claim scope/key made at claimedAt, so
// a retry does the work afresh: what the request did is not known to have
// happened (docs/api.md, Idempotent requests).
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, scope, key string, claimedAt time.Time) error {
	_, err := s.Pool.Exec(ctx, releaseIdempotencyKeySQL,
		pgx.StrictNamedArgs{"scope": scope, "key": key, "claimed_at": claimedAt})
	if err != nil {
		return pg.Classify(fmt.Errorf("release idempotency key: %w", err))
	}
	return nil
}

//go:embed sql/claim_idempotency_key.sql
var claimIdempotencyKeySQL string

//go:embed sql/read_idempotency_key.sql
var readIdempotencyKeySQL string

//go:embed sql/complete_idempotency_key.sql
var completeIdempotencyKeySQL string

//go:embed sql/release_idempotency_key.sql
var releaseIdempotencyKeySQL string
