package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestDecodeJSONBody(t *testing.T) {
	type target struct {
		Name  string   `json:"name"`
		Count int8     `json:"count"`
		Tags  []string `json:"tags"`
	}
	cases := []struct {
		body   string
		field  string // details.field wanted; "" for none
		offset any    // details.offset wanted; nil for none
		at     string // the place the message names; "" for none
		ok     bool
	}{
		{body: `{"name":"a","count":1,"tags":["x"]}`, ok: true},
		{body: " \n{}\t ", ok: true},
		{body: ``},
		{body: "  \n"},
		{body: `null`, offset: int64(0), at: "line 1, column 1"},
		{body: `  "text"`, offset: int64(2), at: "line 1, column 3"},
		{body: `{"name":"a","color":"red"}`, field: "color"},
		{body: `{"name":1}`, field: "name"},
		{body: `{"count":300}`, field: "count"},
		{body: `{"tags":"x"}`, field: "tags"},
		{body: `{"tags":[1]}`, field: "tags"},
		{body: `{"name" "a"}`, offset: int64(8), at: "line 1, column 9"},
		{body: "{\n  \"name\": \"a\",\n  \"tags\": [x]\n}", offset: int64(28), at: "line 3, column 12"},
		{body: `{"name":"a"`, offset: int64(11), at: "line 1, column 12"},
		{body: "{\n  \"tags\": [\"a\",\n", offset: int64(17), at: "line 2, column 16"},
		{body: `{"name":"a"} x`, offset: int64(13), at: "line 1, column 14"},
		{body: `{}{}`, offset: int64(2), at: "line 1, column 3"},
	}
	for _, c := range cases {
		var dst target
		err := decodeJSONBody([]byte(c.body), &dst)
		if c.ok {
			if err != nil {
				t.Errorf("%q: %v", c.body, err)
			}
			continue
		}
		var apiErr *apiError
		if !errors.As(err, &apiErr) || apiErr.status != http.StatusBadRequest || apiErr.code != CodeInvalidRequest {
			t.Errorf("%q: err = %#v, want a 400 invalid_request", c.body, err)
			continue
		}
		if got := apiErr.details["field"]; c.field != "" && got != c.field {
			t.Errorf("%q: details.field = %v, want %q", c.body, got, c.field)
		}
		if got := apiErr.details["offset"]; c.offset != nil && got != c.offset {
			t.Errorf("%q: details.offset = %#v, want %#v", c.body, got, c.offset)
		}
		if c.at != "" && !strings.Contains(apiErr.message, " at "+c.at) {
			t.Errorf("%q: message %q does not say it is at %s", c.body, apiErr.message, c.at)
		}
	}
}

// TestDecodeOptionalJSON: leaving the body out is allowed; sending one
// holds it to the strict rules.
func TestDecodeOptionalJSON(t *testing.T) {
	type target struct {
		Secret string `json:"secret"`
	}
	cases := []struct {
		body   string
		secret string
		ok     bool
	}{
		{body: "", ok: true},
		{body: " \r\n\t", ok: true},
		{body: "{}", ok: true},
		{body: `{"secret":"s"}`, secret: "s", ok: true},
		{body: `{"secrte":"s"}`},
		{body: `null`},
		{body: `{"secret":"s"} {}`},
	}
	for _, c := range cases {
		dst := target{}
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(c.body))
		err := decodeOptionalJSON(req, &dst)
		if (err == nil) != c.ok || c.ok && dst.Secret != c.secret {
			t.Errorf("%q: secret %q, err %v; want secret %q, ok %v", c.body, dst.Secret, err, c.secret, c.ok)
		}
	}
}

func TestBearerToken(t *testing.T) {
	cases := []struct {
		header string
		token  string
		err    error
	}{
		{"Bearer abc", "abc", nil},
		{"bearer abc", "abc", nil},
		{"BEARER  abc", "abc", nil},
		{"", "", errNoCredentials},
		{"Bearer", "", errMalformedCredentials},
		{"Bearer ", "", errMalformedCredentials},
		{"Basic abc", "", errMalformedCredentials},
		{"Bearer a b", "", errMalformedCredentials},
		{"abc", "", errMalformedCredentials},
	}
	for _, c := range cases {
		token, err := bearerToken(c.header)
		if token != c.token || err != c.err {
			t.Errorf("bearerToken(%q) = %q, %v; want %q, %v", c.header, token, err, c.token, c.err)
		}
	}
}

func TestSaneRequestID(t *testing.T) {
	cases := map[string]bool{
		"abc":                              true,
		"0196a1c2-7d3e-7f00-8a4b-1c2d3e4f": true,
		"svc:trace_1.2":                    true,
		"":                                 false,
		"has space":                        false,
		"new\nline":                        false,
		`quote"`:                           false,
		"ünïcode":                          false,
		fmt.Sprintf("%0129d", 0):           false,
		fmt.Sprintf("%0128d", 0):           true,
	}
	for id, want := range cases {
		if got := saneRequestID(id); got != want {
			t.Errorf("saneRequestID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestResponseFor(t *testing.T) {
	cases := []struct {
		name       string
		err        error
		status     int
		code       string
		field      string
		retryAfter string
	}{
		{"validation", fmt.Errorf("wrapped: %w", &hubapi.ValidationError{Field: "name", Code: "invalid_request", Message: "bad"}), 400, "invalid_request", "name", ""},
		{"not found", &hubapi.NotFoundError{Code: "tenant_not_found", Message: "no", Err: pg.ErrNotFound}, 404, "tenant_not_found", "", ""},
		{"conflict", &hubapi.ConflictError{Code: "tenant_already_exists", Message: "dup", Err: pg.ErrConflict}, 409, "tenant_already_exists", "", ""},
		{"unprocessable", fmt.Errorf("verify: %w", &hubapi.UnprocessableError{Code: "verification_failed", Message: "probe: 500"}), 422, "verification_failed", "", ""},
		{"store unavailable", fmt.Errorf("list: %w", pg.ErrUnavailable), 503, "store_unavailable", "", "5"},
		{"api error", errInvalidToken, 401, "unauthorized", "", ""},
		{"anything else", errors.New("pq: relation does not exist"), 500, "internal", "", ""},
	}
	for _, c := range cases {
		resp := responseFor(c.err)
		if resp.status != c.status || resp.body.Code != c.code || resp.header.Get("Retry-After") != c.retryAfter {
			t.Errorf("%s: %d %s (Retry-After %q), want %d %s (%q)", c.name, resp.status, resp.body.Code, resp.header.Get("Retry-After"), c.status, c.code, c.retryAfter)
		}
		if got, _ := resp.body.Details["field"].(string); got != c.field {
			t.Errorf("%s: details.field = %q, want %q", c.name, got, c.field)
		}
		if c.status == 500 && resp.body.Message == c.err.Error() {
			t.Errorf("%s: a 500 shows the internal error text", c.name)
		}
	}
}

func TestAbandonedRequestsGetNoAnswer(t *testing.T) {
	s := New(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	s.respondError(rec, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx), context.Canceled)
	if rec.Body.Len() != 0 || rec.Code != http.StatusOK && rec.Code != 0 {
		t.Errorf("answered an abandoned request: %d %q", rec.Code, rec.Body.String())
	}
	// The same error while the client is still there is the hub's own.
	rec = httptest.NewRecorder()
	s.respondError(rec, httptest.NewRequest(http.MethodGet, "/", nil), context.Canceled)
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("context.Canceled with the client present: %d, want 500", rec.Code)
	}
}
