// Package api is hubctl's HTTP surface (docs/api.md): probes, metrics,
// version, the admin API under /admin and the tenant API under /v1, on
// net/http's ServeMux. Every error, the mux's own 404 and 405 included, is
// JSON {"code","message","details"} with the codes of docs/api.md.
//
// Handlers return errors instead of writing them; respondError is the one
// place that maps an error to a status and code. Every request passes
// through the same middleware: request id, access log, panic recovery and
// the 1 MiB body limit.
package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hubctl/hubctl/internal/buildinfo"
	"github.com/hubctl/hubctl/internal/idempotency"
	"github.com/hubctl/hubctl/internal/ratelimit"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// ReadinessCheck reports why the process cannot take traffic, or nil.
type ReadinessCheck func(ctx context.Context) error

// Options wires the handler to the rest of the process.
type Options struct {
	Logger *slog.Logger
	// Gatherer serves /metrics; nil disables the endpoint
	// (STREAMING_HUB_METRICS_ENABLED=false).
	Gatherer prometheus.Gatherer
	// Checks must all pass for /readyz to answer 200.
	Checks map[string]ReadinessCheck
	// AdminToken is STREAMING_HUB_ADMIN_TOKEN. Empty disables the admin API:
	// /admin answers 403, and the admin token cannot act on /v1.
	AdminToken string
	// ControlPlane serves /admin and /v1; nil serves only the probes,
	// /version and /metrics.
	ControlPlane UseCases
	// Idempotency stores Idempotency-Keys and their responses; nil
	// ignores the header.
	Idempotency *idempotency.Keys
	// PullLimiter is the per-tenant token bucket of GET /v1/events
	// (STREAMING_HUB_PULL_RATE, STREAMING_HUB_PULL_BURST); nil leaves pull
	// reads unlimited.
	PullLimiter *ratelimit.Limiter
	// Portal serves /portal/ (internal/portal); nil leaves it unserved
	// (STREAMING_HUB_PORTAL_ENABLED=false). Its pages pass the same
	// middleware as the API's routes, and are no API route of their own.
	Portal http.Handler
}

// UseCases is what /admin and /v1 serve: the use cases as each caller
// may use them, the same ones the CLI calls, and who a tenant API key is.
// Handlers reach the hub only through the hubapi.ControlPlane of the
// request's caller, which decides what that caller may touch.
type UseCases interface {
	As(caller hubapi.Caller) hubapi.ControlPlane
	// Authenticate answers hubapi.ErrInvalidAPIKey or
	// hubapi.ErrTenantInactive for a token that may not act.
	Authenticate(ctx context.Context, token string) (hubapi.Caller, error)
}

// Server is the HTTP handler plus the draining switch that SIGTERM flips.
type Server struct {
	opts     Options
	log      *slog.Logger
	mux      *http.ServeMux
	handler  http.Handler
	draining atomic.Bool
	// patterns lists every registered route, in registration order, so
	// the documentation can be checked against what is really served.
	patterns []string
}

// New builds the handler.
func New(opts Options) *Server {
	s := &Server{opts: opts, log: opts.Logger, mux: http.NewServeMux()}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.handle("GET /healthz", http.HandlerFunc(s.healthz))
	s.handle("GET /readyz", http.HandlerFunc(s.readyz))
	s.handle("GET /version", http.HandlerFunc(s.version))
	s.handle("GET /openapi.json", http.HandlerFunc(s.openAPIDocument))
	if opts.Gatherer != nil {
		s.handle("GET /metrics", promhttp.HandlerFor(opts.Gatherer, promhttp.HandlerOpts{}))
	}
	if opts.ControlPlane != nil {
		s.controlPlaneRoutes()
	}
	if opts.Portal != nil {
		s.mux.Handle("/portal/", opts.Portal)
	}
	s.handler = s.middleware(http.HandlerFunc(s.route))
	return s
}

// handle registers a route on the mux, the one place every route passes.
func (s *Server) handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, h)
	s.patterns = append(s.patterns, pattern)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Drain makes /readyz answer 503 from now on: the first step of shutdown, so
// load balancers stop sending work before anything stops. Pull reads answer
// 503 draining too: a follower polls without end, and would otherwise keep
// the instance busy until its last moment.
func (s *Server) Drain() { s.draining.Store(true) }

// healthz is liveness: 200 while the process runs, draining included, so an
// orchestrator never kills a process that is finishing its work.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		WriteError(w, http.StatusServiceUnavailable, CodeDraining, "the hub is shutting down", nil)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	failures := map[string]any{}
	for name, check := range s.opts.Checks {
		if err := check(ctx); err != nil {
			failures[name] = err.Error()
		}
	}
	if len(failures) > 0 {
		WriteError(w, http.StatusServiceUnavailable, "not_ready", "a dependency is not ready", failures)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func (s *Server) version(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, buildinfo.Get())
}

// WriteError writes an error response in the shape docs/api.md gives.
func WriteError(w http.ResponseWriter, status int, code, message string, details map[string]any) {
	writeJSON(w, status, hubapi.Error{Code: code, Message: message, Details: details})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
