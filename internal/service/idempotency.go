package service

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/store"
)

// Idempotency-Key handling (docs/api.md, Idempotent requests): the first
// request under a key claims it, does the work and stores its response;
// the same request again within the window gets that response, another
// request under the key is refused.
const (
	CodeIdempotencyKeyReused     = "idempotency_key_reused"
	CodeIdempotencyKeyInProgress = "idempotency_key_in_progress"

	// MaxIdempotencyKeyLength bounds a key; a UUID is 36 characters.
	MaxIdempotencyKeyLength = 255

	// IdempotencyAbandonedAfter is when a claim whose response never came
	// (its process died mid-request) may be taken over: well above the
	// longest request (a verification probe: attempt_timeout ≤ 60s).
	IdempotencyAbandonedAfter = 5 * time.Minute
)

// responseField is the field name a stored response is sealed under.
const responseField = "response"

// IdempotentAction is what to do with a request that carries a key.
type IdempotentAction int

const (
	// IdempotentProceed: the key is this request's; do the work.
	IdempotentProceed IdempotentAction = iota
	// IdempotentReplay: the same request is done; answer its response.
	IdempotentReplay
	// IdempotentInProgress: the same request is being done now.
	IdempotentInProgress
	// IdempotentReused: another request used the key.
	IdempotentReused
)

// DecideIdempotent judges an Idempotency-Key whose claim found a row
// already there: existing is that row, fingerprint the request's.
func DecideIdempotent(existing store.IdempotencyRecord, fingerprint []byte) IdempotentAction {
	switch {
	case subtle.ConstantTimeCompare(existing.Fingerprint, fingerprint) != 1:
		return IdempotentReused
	case existing.Done:
		return IdempotentReplay
	}
	return IdempotentInProgress
}

// CheckIdempotencyKey validates a key as the header carries it: 1 to 255
// printable ASCII characters.
func CheckIdempotencyKey(key string) error {
	if key == "" || len(key) > MaxIdempotencyKeyLength {
		return invalid("Idempotency-Key", "invalid Idempotency-Key: use 1 to %d printable ASCII characters, e.g. a UUID", MaxIdempotencyKeyLength)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return invalid("Idempotency-Key", "invalid Idempotency-Key: use 1 to %d printable ASCII characters, e.g. a UUID", MaxIdempotencyKeyLength)
		}
	}
	return nil
}

// IdempotencyFingerprint is what makes two requests the same one: SHA-256
// over the method, path, query, the tenant acted on and the body, each
// length-prefixed so no two requests collide by shifting bytes between
// parts.
func IdempotencyFingerprint(method, path, query, tenant string, body []byte) []byte {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(method), []byte(path), []byte(query), []byte(tenant), body} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return h.Sum(nil)
}

// Idempotency stores Idempotency-Keys and their responses in PostgreSQL.
// Responses are sealed under the KEK like every other secret at rest: some
// hold one (a created API key, a signing secret), and replaying exactly
// the first response is the point.
type Idempotency struct {
	store *store.Store
	keys  *crypto.Keyring
	now   func() time.Time
}

// NewIdempotency returns the Idempotency-Key use cases; keys seals the
// stored responses.
func NewIdempotency(st *store.Store, keys *crypto.Keyring, now func() time.Time) *Idempotency {
	if now == nil {
		now = time.Now
	}
	return &Idempotency{store: st, keys: keys, now: now}
}

// IdempotencyClaim is a key this process owns until Finish or Release.
type IdempotencyClaim struct {
	scope, key string
	at         time.Time
}

// IdempotentResponse is a stored response.
type IdempotentResponse struct {
	Status   int
	Location string
	Body     []byte
}

// IdempotentOutcome is what Begin found: the claim when Action is
// IdempotentProceed, the stored response when IdempotentReplay.
type IdempotentOutcome struct {
	Action   IdempotentAction
	Claim    *IdempotencyClaim
	Response IdempotentResponse
}

// Begin claims key for the caller scope ("admin" or "tenant:<id>"), or
// says what the key's row holds. tenant is the tenant the request acts on
// ("" for none): purging it removes the key with its stored response.
func (s *Idempotency) Begin(ctx context.Context, scope, key, tenant string, fingerprint []byte) (IdempotentOutcome, error) {
	// PostgreSQL keeps microseconds: the claim's time must read back equal.
	now := s.now().UTC().Truncate(time.Microsecond)
	claimed, existing, err := s.store.ClaimIdempotencyKey(ctx, scope, key, tenant, fingerprint, now,
		now.Add(-store.IdempotencyWindow), now.Add(-IdempotencyAbandonedAfter))
	if err != nil {
		return IdempotentOutcome{}, err
	}
	if claimed {
		return IdempotentOutcome{Action: IdempotentProceed, Claim: &IdempotencyClaim{scope: scope, key: key, at: now}}, nil
	}
	out := IdempotentOutcome{Action: DecideIdempotent(existing, fingerprint)}
	if out.Action != IdempotentReplay {
		return out, nil
	}
	body, err := s.keys.Decrypt(existing.Response, sealedRowID(scope, key), responseField)
	if err != nil {
		return IdempotentOutcome{}, fmt.Errorf("open the stored response of Idempotency-Key %q: %w", key, err)
	}
	out.Response = IdempotentResponse{Status: existing.Status, Location: existing.Location, Body: body}
	return out, nil
}

// Finish stores the response of a claimed request.
func (s *Idempotency) Finish(ctx context.Context, c *IdempotencyClaim, resp IdempotentResponse) error {
	sealed, err := s.keys.Encrypt(resp.Body, sealedRowID(c.scope, c.key), responseField)
	if err != nil {
		return fmt.Errorf("seal the response of Idempotency-Key %q: %w", c.key, err)
	}
	return s.store.CompleteIdempotencyKey(ctx, c.scope, c.key, c.at, resp.Status, resp.Location, sealed)
}

// Release gives a claimed key up, so a retry does the work afresh.
func (s *Idempotency) Release(ctx context.Context, c *IdempotencyClaim) error {
	return s.store.ReleaseIdempotencyKey(ctx, c.scope, c.key, c.at)
}

// sealedRowID binds a sealed response to its row. Scopes ("admin",
// "tenant:<id>") never hold a "/", so no two rows share one.
func sealedRowID(scope, key string) string { return scope + "/" + key }
