package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hubctl/hubctl/internal/idempotency"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Idempotent requests (docs/api.md, Idempotent requests).
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderIdempotencyReplayed marks an answer that is a stored response,
	// not the work done again.
	HeaderIdempotencyReplayed = "Idempotency-Replayed"
)

// How long a duplicate of a request in progress waits for its response
// before it is answered 409 idempotency_key_in_progress, and how often it
// looks. Most requests take milliseconds, so a concurrent duplicate
// usually gets the first one's response; a verification probe may take
// longer than a client should be held.
var (
	idempotencyWait = 10 * time.Second
	idempotencyPoll = 25 * time.Millisecond
)

// Scopes of stored keys: a key is the caller's own, the admin's or one
// tenant's (any of its API keys).
const scopeAdmin = "admin"

func tenantScope(tenantID string) string { return "tenant:" + tenantID }

// idempotent runs h under the request's Idempotency-Key, if it is a POST
// and carries one: the first request with the key does the work, its
// duplicates get its response. scope is the caller, tenant the tenant the
// request acts on ("" on /admin).
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, scope, tenant string, h handlerFunc) error {
	idem := s.opts.Idempotency
	keys := r.Header.Values(HeaderIdempotencyKey)
	if r.Method != http.MethodPost || len(keys) == 0 || idem == nil {
		return h(w, r)
	}
	if len(keys) > 1 {
		return invalidRequest(HeaderIdempotencyKey, "send one "+HeaderIdempotencyKey+" header, not several")
	}
	key := keys[0]
	if err := idempotency.CheckKey(key); err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	fingerprint := idempotency.Fingerprint(r.Method, r.URL.EscapedPath(), r.URL.RawQuery, tenant, body)
	actsOn := tenant
	if actsOn == "" {
		actsOn = adminRequestTenant(r, body)
	}

	deadline := time.Now().Add(idempotencyWait)
	for {
		out, err := idem.Begin(r.Context(), scope, key, actsOn, fingerprint)
		if err != nil {
			return err
		}
		switch out.Action {
		case idempotency.Proceed:
			s.runClaimed(w, r, out.Claim, h)
			return nil
		case idempotency.Replay:
			writeStored(w, out.Response)
			return nil
		case idempotency.Reused:
			return &apiError{status: http.StatusUnprocessableEntity, code: idempotency.CodeKeyReused,
				message: "this " + HeaderIdempotencyKey + " was used by another request (method, path or body differ): use a new key for a new request"}
		}
		if time.Now().After(deadline) {
			return &apiError{status: http.StatusConflict, code: idempotency.CodeKeyInProgress,
				message: "a request with this " + HeaderIdempotencyKey + " is still in progress: retry later for its response",
				header:  retryAfter(1)}
		}
		select {
		case <-r.Context().Done():
			return r.Context().Err()
		case <-time.After(idempotencyPoll):
		}
	}
}

// adminRequestTenant is the tenant an /admin POST acts on: the one its
// path names, or the one POST /admin/tenants creates. Its stored answer is
// that tenant's and goes with its purge: it may hold the tenant's API key.
func adminRequestTenant(r *http.Request, body []byte) string {
	if id := r.PathValue("id"); id != "" && strings.HasPrefix(r.Pattern, "POST /admin/tenants/{id}") {
		return id
	}
	if r.Pattern == "POST /admin/tenants" {
		var create hubapi.TenantCreate
		// A body that is not a tenant is refused by the handler; its
		// answer then belongs to no tenant.
		if json.Unmarshal(body, &create) == nil {
			return create.ID
		}
	}
	return ""
}

// runClaimed does the work of a claimed key, then stores its response, or
// releases the key when there is none to keep: a 5xx (the work may not
// have happened, and a retry should try it), a client gone before the
// answer, a panic.
func (s *Server) runClaimed(w http.ResponseWriter, r *http.Request, claim *idempotency.Claim, h handlerFunc) {
	idem := s.opts.Idempotency
	rec := &recorder{header: http.Header{}}
	ctx := context.WithoutCancel(r.Context())
	defer func() {
		if p := recover(); p != nil {
			s.releaseClaim(ctx, r, claim)
			panic(p)
		}
	}()
	if err := h(rec, r); err != nil {
		s.respondError(rec, r, err)
	}
	if rec.status == 0 || rec.status >= http.StatusInternalServerError {
		s.releaseClaim(ctx, r, claim)
	} else if err := idem.Finish(ctx, claim, idempotency.Response{
		Status: rec.status, Location: rec.header.Get("Location"), Body: rec.body.Bytes(),
	}); err != nil {
		// The work is done and its answer goes out; a duplicate waits
		// until the claim counts as abandoned.
		s.log.Warn("storing an idempotent response failed", "request_id", infoFrom(r.Context()).id, "error", err)
	}
	rec.writeTo(w)
}

func (s *Server) releaseClaim(ctx context.Context, r *http.Request, claim *idempotency.Claim) {
	if err := s.opts.Idempotency.Release(ctx, claim); err != nil {
		s.log.Warn("releasing an idempotency key failed", "request_id", infoFrom(r.Context()).id, "error", err)
	}
}

// writeStored answers a stored response.
func writeStored(w http.ResponseWriter, resp idempotency.Response) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set(HeaderIdempotencyReplayed, "true")
	if resp.Location != "" {
		w.Header().Set("Location", resp.Location)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(resp.Body)))
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

// recorder holds a response until it is stored. None of the routes it
// serves streams.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (rec *recorder) Header() http.Header { return rec.header }

func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
}

func (rec *recorder) Write(p []byte) (int, error) {
	rec.WriteHeader(http.StatusOK)
	return rec.body.Write(p)
}

// writeTo sends the recorded response; nothing when nothing was written
// (the client is gone).
func (rec *recorder) writeTo(w http.ResponseWriter) {
	if rec.status == 0 {
		return
	}
	for name, values := range rec.header {
		w.Header()[name] = values
	}
	w.WriteHeader(rec.status)
	_, _ = w.Write(rec.body.Bytes())
}
