package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/pkg/client"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// TestExitCodeAgreesAcrossModes pairs each outcome's direct-mode error with
// the API answer remote mode gets for it: both must exit alike.
func TestExitCodeAgreesAcrossModes(t *testing.T) {
	apiErr := func(status int) error { return fmt.Errorf("call: %w", &client.Error{StatusCode: status}) }
	cases := []struct {
		name   string
		direct error
		remote error
		want   int
	}{
		{"invalid value", &hubapi.ValidationError{Field: "id"}, apiErr(400), ExitFailure},
		{"not found", &hubapi.NotFoundError{Err: pg.ErrNotFound}, apiErr(404), ExitNotFound},
		{"conflict", &hubapi.ConflictError{Err: pg.ErrConflict}, apiErr(409), ExitFailure},
		{"subscription limit", &hubapi.ConflictError{Code: service.CodeSubscriptionLimitReached,
			Err: &catalog.SubscriptionLimitError{TenantID: "acme", Limit: 2}}, apiErr(409), ExitFailure},
		{"verification failed", &hubapi.UnprocessableError{}, apiErr(422), ExitFailure},
		{"forbidden", &hubapi.ForbiddenError{Code: hubapi.CodeForbidden}, apiErr(403), ExitUnauthorized},
		{"unavailable", fmt.Errorf("query: %w", pg.ErrUnavailable), apiErr(503), ExitUnavailable},
		{"internal", errors.New("boom"), apiErr(500), ExitFailure},
		{"usage", UsageErrorf("--tenant is required"), UsageErrorf("--tenant is required"), ExitUsage},
	}
	for _, c := range cases {
		if got := ExitCode(c.direct); got != c.want {
			t.Errorf("%s directly: exit %d, want %d", c.name, got, c.want)
		}
		if got := ExitCode(c.remote); got != c.want {
			t.Errorf("%s through the API: exit %d, want %d", c.name, got, c.want)
		}
	}
}

func TestExitCodeOfRemoteOnlyOutcomes(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"401", &client.Error{StatusCode: 401}, ExitUnauthorized},
		{"403", &client.Error{StatusCode: 403}, ExitUnauthorized},
		{"429", &client.Error{StatusCode: 429}, ExitUnavailable},
		{"502 from a proxy", &client.Error{StatusCode: 502}, ExitUnavailable},
		{"unreachable", fmt.Errorf("GET /admin/tenants: %w", &url.Error{Op: "Get", URL: "http://127.0.0.1:1", Err: errors.New("connection refused")}), ExitUnavailable},
		{"interrupted", fmt.Errorf("GET: %w", &url.Error{Op: "Get", Err: context.Canceled}), ExitFailure},
		{"timed out", fmt.Errorf("GET: %w", &url.Error{Op: "Get", Err: context.DeadlineExceeded}), ExitUnavailable},
		{"bad configuration", &config.ValidationError{}, ExitUsage},
		{"explicit", WithCode(ExitNotFound, errors.New("x")), ExitNotFound},
	}
	for _, c := range cases {
		if got := ExitCode(c.err); got != c.want {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.want)
		}
	}
}
