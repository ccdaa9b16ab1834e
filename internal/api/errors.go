package api

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Codes the API itself answers with (docs/api.md); the use cases bring their
// own (hubapi.Code* and internal/service's Code*).
const (
	CodeUnauthorized     = "unauthorized"
	CodeForbidden        = hubapi.CodeForbidden
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeInvalidRequest   = hubapi.CodeInvalidRequest
	CodeRequestTooLarge  = "request_too_large"
	CodeStoreUnavailable = "store_unavailable"
	CodeInternal         = "internal"
)

// storeRetryAfterSeconds is the Retry-After of store_unavailable: long
// enough for a pool to reconnect or a failover to finish, short enough that
// a client's retry is not what keeps it waiting.
const storeRetryAfterSeconds = 5

// apiError is an answer the API decides itself (authentication, decoding,
// routing, query parameters) rather than one a use case returns.
type apiError struct {
	status  int
	code    string
	message string
	details map[string]any
	// challenge is the WWW-Authenticate value of a 401.
	challenge string
	// header holds further headers of the answer, such as Retry-After.
	header http.Header
}

func (e *apiError) Error() string { return e.message }

// invalidRequest is a 400 invalid_request naming the offending input.
func invalidRequest(field, message string) *apiError {
	return &apiError{status: http.StatusBadRequest, code: CodeInvalidRequest, message: message, details: map[string]any{"field": field}}
}

// errorResponse is what an error answers: status, body and the headers
// that go with them.
type errorResponse struct {
	status int
	body   hubapi.Error
	header http.Header
}

// responseFor maps any error a handler returns to its answer. It is the one
// place where errors meet HTTP: a new typed error of the control plane
// needs one case here and nowhere else. Anything it does not recognise is
// a 500 with a generic message, since its text was never meant for clients.
func responseFor(err error) errorResponse {
	var (
		apiErr     *apiError
		validation *hubapi.ValidationError
		forbidden  *hubapi.ForbiddenError
		notFound   *hubapi.NotFoundError
		conflict   *hubapi.ConflictError
		failed     *hubapi.UnprocessableError
	)
	switch {
	case errors.As(err, &apiErr):
		resp := errorResponse{status: apiErr.status, body: hubapi.Error{Code: apiErr.code, Message: apiErr.message, Details: apiErr.details},
			header: apiErr.header.Clone()}
		if apiErr.challenge != "" {
			if resp.header == nil {
				resp.header = http.Header{}
			}
			resp.header.Set("Www-Authenticate", apiErr.challenge)
		}
		return resp
	case errors.As(err, &validation):
		var details map[string]any
		if validation.Field != "" || len(validation.Details) > 0 {
			details = map[string]any{}
			for k, v := range validation.Details {
				details[k] = v
			}
			if validation.Field != "" {
				details["field"] = validation.Field
			}
		}
		return errorResponse{status: http.StatusBadRequest, body: hubapi.Error{Code: validation.Code, Message: validation.Message, Details: details}}
	case errors.As(err, &forbidden):
		return errorResponse{status: http.StatusForbidden, body: hubapi.Error{Code: forbidden.Code, Message: forbidden.Message}}
	case errors.As(err, &notFound):
		return errorResponse{status: http.StatusNotFound, body: hubapi.Error{Code: notFound.Code, Message: notFound.Message}}
	case errors.As(err, &conflict):
		return errorResponse{status: http.StatusConflict, body: hubapi.Error{Code: conflict.Code, Message: conflict.Message}}
	case errors.As(err, &failed):
		return errorResponse{status: http.StatusUnprocessableEntity, body: hubapi.Error{Code: failed.Code, Message: failed.Message}}
	case errors.Is(err, pg.ErrUnavailable):
		return errorResponse{
			status: http.StatusServiceUnavailable,
			body:   hubapi.Error{Code: CodeStoreUnavailable, Message: "the database is unavailable; retry later"},
			header: retryAfter(storeRetryAfterSeconds),
		}
	}
	return errorResponse{status: http.StatusInternalServerError, body: hubapi.Error{Code: CodeInternal, Message: "internal error; the request id identifies it in the hub's log"}}
}

// respondError writes err's answer, logging what operators need: the cause
// of a 500 or 503, which the client never sees.
func (s *Server) respondError(w http.ResponseWriter, r *http.Request, err error) {
	info := infoFrom(r.Context())
	if r.Context().Err() != nil {
		// The client is gone: nobody reads an answer, and its absence is
		// not the hub's failure.
		s.log.Debug("request abandoned by the client", "request_id", info.id, "pattern", info.pattern, "error", err)
		info.abandoned = true
		return
	}
	resp := responseFor(err)
	switch {
	case resp.status >= http.StatusInternalServerError && resp.body.Code == CodeInternal:
		s.log.Error("request failed", "request_id", info.id, "pattern", info.pattern, "error", err)
	case resp.status >= http.StatusInternalServerError:
		s.log.Warn("request failed", "request_id", info.id, "pattern", info.pattern, "code", resp.body.Code, "error", err)
	}
	for name, values := range resp.header {
		w.Header()[name] = values
	}
	WriteError(w, resp.status, resp.body.Code, resp.body.Message, resp.body.Details)
}

// logLevelFor is the access log level of a finished request: failures of
// the hub stand out, and probes, scraped every few seconds, stay out of the
// way unless they fail.
func logLevelFor(pattern string, status int) slog.Level {
	switch {
	case status >= http.StatusInternalServerError:
		return slog.LevelWarn
	case quietPatterns[pattern] && status < http.StatusBadRequest:
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

var quietPatterns = map[string]bool{"GET /healthz": true, "GET /readyz": true, "GET /metrics": true}
