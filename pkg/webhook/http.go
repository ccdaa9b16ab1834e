package webhook

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"slices"
	"time"
)

// DefaultMaxBodyBytes is the body limit of RequireSignature when none is
// given: 1 MiB, the hub's default STREAMING_HUB_MAX_EVENT_BYTES, so no event
// the hub accepts with its defaults is refused.
const DefaultMaxBodyBytes = 1 << 20

// VerifyRequest verifies a delivery whose body has already been read. It takes
// the timestamp and every X-Webhook-Signature line from r's header and
// otherwise behaves as Verify. A request carrying several X-Webhook-Timestamp
// lines is as malformed as one carrying none: which one was signed is unknown.
func VerifyRequest(r *http.Request, body []byte, secrets []string, now time.Time, tolerance time.Duration) error {
	var timestamp string
	if lines := r.Header.Values(HeaderTimestamp); len(lines) == 1 {
		timestamp = lines[0]
	}
	return Verify(secrets, timestamp, r.Header.Values(HeaderSignature), body, now, tolerance)
}

// RequireSignature returns middleware that passes a request to next only when
// it verifies against secrets at the current time with DefaultTolerance. It
// reads at most maxBodyBytes of body (<= 0 selects DefaultMaxBodyBytes) and
// hands next a body it can read again from the start. Refused requests get
// 401 with the Reason as the body, which the hub records with the attempt;
// 413 when the body is too large; 500 when secrets holds no non-empty secret.
func RequireSignature(secrets []string, maxBodyBytes int64, next http.Handler) http.Handler {
	secrets = slices.Clone(secrets) // the caller may reuse its slice
	if maxBodyBytes <= 0 {
		maxBodyBytes = DefaultMaxBodyBytes
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil {
			r.Body = http.NoBody
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err != nil {
			if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
				http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "cannot read request body", http.StatusBadRequest)
			return
		}
		if err := VerifyRequest(r, body, secrets, time.Now(), DefaultTolerance); err != nil {
			if verr, ok := errors.AsType[*VerifyError](err); ok {
				http.Error(w, string(verr.Reason), http.StatusUnauthorized)
				return
			}
			http.Error(w, "webhook receiver has no signing secret configured", http.StatusInternalServerError)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}
