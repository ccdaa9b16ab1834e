package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/hubctl/hubctl/internal/ratelimit"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Codes of the pull endpoint's refusals (docs/consuming.md, Pulling events).
const (
	CodeRateLimited = "rate_limited"
	CodeDraining    = "draining"
)

// drainingRetryAfterSeconds is the Retry-After of a read refused while the
// hub shuts down: by then a load balancer has taken this instance out of
// rotation (/readyz failed first), so a retry lands on another instance, or
// on this one restarted.
const drainingRetryAfterSeconds = 5

// readEvents serves GET /v1/events, a pull subscription's stream (docs/consuming.md, Pulling events).
// Refusals come cheapest first: draining needs no database, the rate limit
// no more than the authentication that already ran.
func (s *Server) readEvents(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
	if s.draining.Load() {
		return &apiError{status: http.StatusServiceUnavailable, code: CodeDraining,
			message: "the hub is shutting down; retry after Retry-After seconds",
			header:  retryAfter(drainingRetryAfterSeconds)}
	}
	if s.opts.PullLimiter != nil {
		if allowed, wait := s.opts.PullLimiter.Allow(infoFrom(r.Context()).tenant); !allowed {
			seconds := ratelimit.RetryAfterSeconds(wait)
			return &apiError{status: http.StatusTooManyRequests, code: CodeRateLimited,
				message: fmt.Sprintf("too many pull requests for this tenant; retry in %d s", seconds),
				header:  retryAfter(seconds)}
		}
	}
	q := r.URL.Query()
	subscriptionID, present, err := singleParam(q, "subscription_id")
	if err != nil {
		return err
	}
	if !present || subscriptionID == "" {
		return invalidRequest("subscription_id", "subscription_id is required: the id of the pull subscription to read")
	}
	params, err := pullParams(q)
	if err != nil {
		return err
	}
	page, err := hub.ReadEvents(r.Context(), tenant, subscriptionID, params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// pullParams reads limit and after. Both must be plain decimal integers
// here; the service checks their ranges.
func pullParams(q url.Values) (hubapi.PullParams, error) {
	var p hubapi.PullParams
	limit, present, err := singleParam(q, "limit")
	if err != nil {
		return p, err
	}
	if present {
		n, ok := parseDecimal(limit)
		if !ok || n < 1 || n > hubapi.MaxPageLimit {
			return p, invalidRequest("limit", fmt.Sprintf("invalid limit %q: must be an integer between 1 and %d", limit, hubapi.MaxPageLimit))
		}
		p.Limit = int(n)
	}
	after, present, err := singleParam(q, "after")
	if err != nil {
		return p, err
	}
	if present {
		seq, ok := parseDecimal(after)
		if !ok {
			return p, invalidRequest("after", fmt.Sprintf("invalid after %q: must be a seq, an integer of 0 or more", after))
		}
		p.After = &seq
	}
	return p, nil
}

// parseDecimal reads a non-negative integer written with digits only: no
// sign, no spaces, nothing a proxy or log might read differently.
func parseDecimal(s string) (int64, bool) {
	if s == "" || len(s) > 19 {
		return 0, false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func retryAfter(seconds int) http.Header {
	return http.Header{"Retry-After": {strconv.Itoa(seconds)}}
}
