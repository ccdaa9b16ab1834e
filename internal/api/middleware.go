package api

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"runtime/debug"
	"strings"
	"time"
)

const (
	// HeaderRequestID carries the request id in and out: a client's own id
	// is kept when sane, so one id follows a request across systems.
	HeaderRequestID = "X-Request-Id"
	// MaxBodyBytes is SPEC §6.1's request size limit.
	MaxBodyBytes = 1 << 20
	// maxRequestIDLength bounds a client-chosen request id.
	maxRequestIDLength = 128
)

// requestInfo is what the access log reports about a request. It is filled
// in as the request goes deeper (the route by the router, the tenant by
// authentication) and read once the response is written.
type requestInfo struct {
	id        string
	pattern   string
	tenant    string
	auth      string
	abandoned bool
}

type requestInfoKey struct{}

// infoFrom returns the request's info; a request that bypassed the
// middleware (a handler called directly) gets a throwaway one.
func infoFrom(ctx context.Context) *requestInfo {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return info
	}
	return &requestInfo{}
}

// saneRequestID reports whether a client's request id can be echoed and
// logged as it is: short, and only characters no log or header parser
// treats specially.
func saneRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLength {
		return false
	}
	for _, c := range []byte(id) {
		isAlnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !isAlnum && c != '-' && c != '_' && c != '.' && c != ':' {
			return false
		}
	}
	return true
}

func requestID(incoming string) string {
	if saneRequestID(incoming) {
		return incoming
	}
	return rand.Text()
}

// middleware wraps every request: request id, body limit, panic recovery
// and the access log.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{id: requestID(r.Header.Get(HeaderRequestID))}
		w.Header().Set(HeaderRequestID, info.id)
		sw := &statusWriter{ResponseWriter: w}
		r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))
		r.Body = http.MaxBytesReader(sw, r.Body, MaxBodyBytes)

		defer func() {
			if recovered := recover(); recovered != nil {
				if recovered == http.ErrAbortHandler {
					panic(recovered) // net/http's own way to abort a response
				}
				s.log.Error("panic serving request", "request_id", info.id, "pattern", info.pattern,
					"panic", fmt.Sprint(recovered), "stack", string(debug.Stack()))
				if !sw.wroteHeader {
					s.respondError(sw, r, fmt.Errorf("panic: %v", recovered))
				}
			}
			s.logAccess(r, info, sw.status, time.Since(start))
		}()
		next.ServeHTTP(sw, r)
	})
}

// logAccess writes one line per request. It names the route by its
// pattern, never the raw path or query (which may carry ids or secrets),
// and never headers or bodies.
func (s *Server) logAccess(r *http.Request, info *requestInfo, status int, elapsed time.Duration) {
	if status == 0 && !info.abandoned {
		status = http.StatusOK // the handler wrote nothing: net/http sends 200
	}
	attrs := []slog.Attr{
		slog.String("method", r.Method),
		slog.String("pattern", info.pattern),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
		slog.String("request_id", info.id),
	}
	if info.tenant != "" {
		attrs = append(attrs, slog.String("tenant", info.tenant))
	}
	if info.auth != "" {
		attrs = append(attrs, slog.String("auth", info.auth))
	}
	if info.abandoned {
		attrs = append(attrs, slog.Bool("abandoned", true))
	}
	s.log.LogAttrs(r.Context(), logLevelFor(info.pattern, status), "http request", attrs...)
}

// statusWriter remembers the status written, for the access log and so a
// panic after the response began does not try to write a second one.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(status int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer
// (flushing, deadlines) through this wrapper.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// route serves r through the mux, answering in JSON where the mux would
// answer 404 or 405 in plain text.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	// The mux would redirect a path it cleans (/v1//subscriptions,
	// /admin/../v1/subscriptions) with an HTML body. No client of this API
	// sends such a path on purpose, and following a redirect across /admin
	// and /v1 is nothing a client should learn to do: refuse it in JSON.
	if p := r.URL.EscapedPath(); r.Method != http.MethodConnect && p != canonicalPath(p) {
		s.respondError(w, r, &apiError{status: http.StatusNotFound, code: CodeNotFound,
			message: "no such endpoint: the path is not in canonical form (empty, . or .. segments)"})
		return
	}
	handler, pattern := s.mux.Handler(r)
	info := infoFrom(r.Context())
	info.pattern = pattern
	if pattern != "" {
		s.mux.ServeHTTP(w, r)
		return
	}
	// The mux matched nothing: its handler knows whether another method
	// would have matched (405, with Allow) or nothing would (404).
	probe := &headerProbe{header: http.Header{}}
	handler.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", probe.header.Get("Allow"))
		s.respondError(w, r, &apiError{status: http.StatusMethodNotAllowed, code: CodeMethodNotAllowed,
			message: fmt.Sprintf("method %s is not allowed here; allowed: %s", r.Method, probe.header.Get("Allow"))})
		return
	}
	s.respondError(w, r, &apiError{status: http.StatusNotFound, code: CodeNotFound, message: "no such endpoint"})
}

// headerProbe records the status and headers a handler writes and drops
// its body.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header { return p.header }

func (p *headerProbe) WriteHeader(status int) {
	if p.status == 0 {
		p.status = status
	}
}

func (p *headerProbe) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return len(b), nil
}

// canonicalPath is p as ServeMux cleans it before matching: rooted, without
// empty, . or .. segments, keeping a trailing slash.
func canonicalPath(p string) string {
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	return clean
}
