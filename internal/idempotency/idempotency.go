// Package idempotency keeps Idempotency-Keys and the responses of the
// requests that carried them (docs/api.md, Idempotent requests): an HTTP
// concern of the API, beside the use cases rather than one of them.
package idempotency

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// The first
// request under a key claims it, does the work and stores its response;
// the same request again within the window gets that response, another
// request under the key is refused.
const (
	CodeKeyReused     = "idempotency_key_reused"
	CodeKeyInProgress = "idempotency_key_in_progress"

	// MaxKeyLength bounds a key; a UUID is 36 characters.
	MaxKeyLength = 255

	// AbandonedAfter is when a claim whose response never came
	// (its process died mid-request) may be taken over: well above the
	// longest request (a verification probe: attempt_timeout ≤ 60s).
	AbandonedAfter = 5 * time.Minute
)

// responseField is the field name a stored response is sealed under.
const responseField = "response"

// Action is what to do with a request that carries a key.
type Action int

const (
	// Proceed: the key is this request's; do the work.
	Proceed Action = iota
	// Replay: the same request is done; answer its response.
	Replay
	// InProgress: the same request is being done now.
	InProgress
	// Reused: another request used the key.
	Reused
)

// Decide judges an Idempotency-Key whose claim found a row
// already there: existing is that row, fingerprint the request's.
func Decide(existing catalog.IdempotencyRecord, fingerprint []byte) Action {
	switch {
	case subtle.ConstantTimeCompare(existing.Fingerprint, fingerprint) != 1:
		return Reused
	case existing.Done:
		return Replay
	}
	return InProgress
}

// CheckKey validates a key as the header carries it: 1 to 255
// printable ASCII characters.
func CheckKey(key string) error {
	invalid := &hubapi.ValidationError{Field: "Idempotency-Key", Code: hubapi.CodeInvalidRequest,
		Message: fmt.Sprintf("invalid Idempotency-Key: use 1 to %d printable ASCII characters, e.g. a UUID", MaxKeyLength)}
	if key == "" || len(key) > MaxKeyLength {
		return invalid
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return invalid
		}
	}
	return nil
}

// Fingerprint is what makes two requests the same one: SHA-256
// over the method, path, query, the tenant acted on and the body, each
// length-prefixed so no two requests collide by shifting bytes between
// parts.
func Fingerprint(method, path, query, tenant string, body []byte) []byte {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(method), []byte(path), []byte(query), []byte(tenant), body} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return h.Sum(nil)
}

// Keys stores Idempotency-Keys and their responses in PostgreSQL.
// Responses are sealed under the KEK like every other secret at rest: some
// hold one (a created API key, a signing secret), and replaying exactly
// the first response is the point.
type Keys struct {
	store *catalog.Store
	keys  *crypto.Keyring
	now   func() time.Time
}

// New returns the Idempotency-Key use cases; keys seals the
// stored responses.
func New(st *catalog.Store, keys *crypto.Keyring, now func() time.Time) *Keys {
	if now == nil {
		now = time.Now
	}
	return &Keys{store: st, keys: keys, now: now}
}

// Claim is a key this process owns until Finish or Release.
type Claim struct {
	scope, key string
	at         time.Time
}

// Response is a stored response.
type Response struct {
	Status   int
	Location string
	Body     []byte
}

// Outcome is what Begin found: the claim when Action is
// Proceed, the stored response when Replay.
type Outcome struct {
	Action   Action
	Claim    *Claim
	Response Response
}

// Begin claims key for the caller scope ("admin" or "tenant:<id>"), or
// says what the key's row holds. tenant is the tenant the request acts on
// ("" for none): purging it removes the key with its stored response.
func (s *Keys) Begin(ctx context.Context, scope, key, tenant string, fingerprint []byte) (Outcome, error) {
	// PostgreSQL keeps microseconds: the claim's time must read back equal.
	now := s.now().UTC().Truncate(time.Microsecond)
	claimed, existing, err := s.store.ClaimIdempotencyKey(ctx, scope, key, tenant, fingerprint, now,
		now.Add(-catalog.IdempotencyWindow), now.Add(-AbandonedAfter))
	if err != nil {
		return Outcome{}, err
	}
	if claimed {
		return Outcome{Action: Proceed, Claim: &Claim{scope: scope, key: key, at: now}}, nil
	}
	out := Outcome{Action: Decide(existing, fingerprint)}
	if out.Action != Replay {
		return out, nil
	}
	body, err := s.keys.Decrypt(existing.Response, sealedRowID(scope, key), responseField)
	if err != nil {
		return Outcome{}, fmt.Errorf("open the stored response of Idempotency-Key %q: %w", key, err)
	}
	out.Response = Response{Status: existing.Status, Location: existing.Location, Body: body}
	return out, nil
}

// Finish stores the response of a claimed request.
func (s *Keys) Finish(ctx context.Context, c *Claim, resp Response) error {
	sealed, err := s.keys.Encrypt(resp.Body, sealedRowID(c.scope, c.key), responseField)
	if err != nil {
		return fmt.Errorf("seal the response of Idempotency-Key %q: %w", c.key, err)
	}
	return s.store.CompleteIdempotencyKey(ctx, c.scope, c.key, c.at, resp.Status, resp.Location, sealed)
}

// Release gives a claimed key up, so a retry does the work afresh.
func (s *Keys) Release(ctx context.Context, c *Claim) error {
	return s.store.ReleaseIdempotencyKey(ctx, c.scope, c.key, c.at)
}

// sealedRowID binds a sealed response to its row. Scopes ("admin",
// "tenant:<id>") never hold a "/", so no two rows share one.
func sealedRowID(scope, key string) string { return scope + "/" + key }
