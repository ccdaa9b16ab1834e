package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/internal/openapi"
	"github.com/hubctl/hubctl/internal/service"
)

// contract is the served OpenAPI document, loaded once for every test.
type contract struct {
	doc    *openapi3.T
	router routers.Router
}

var loadContract = sync.OnceValues(func() (*contract, error) {
	raw, err := openapi.JSON()
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	return &contract{doc: doc, router: router}, nil
})

func mustContract(t testing.TB) *contract {
	t.Helper()
	c, err := loadContract()
	if err != nil {
		t.Fatalf("load the OpenAPI document: %v", err)
	}
	return c
}

// testOnlyPaths are the routes the harness registers for its own tests;
// the document rightly knows nothing of them.
var testOnlyPaths = map[string]bool{strings.TrimPrefix(whoamiPattern, "GET "): true, "/test/panic": true}

// enforceContract wraps the API so that every request a test sends and
// every answer it gets are checked against the OpenAPI document:
//
//   - an answer must match the document's response for its route and
//     status, headers and body (schemas are closed, so a field the code
//     adds but the document lacks fails);
//   - a request the document refuses must be refused by the API (a 4xx):
//     the API may check more than a schema can say, never less;
//   - a request to no documented route must be answered with an error, in
//     the error shape.
//
// Violations fail the test that sent the request.
func enforceContract(t testing.TB, next http.Handler) http.Handler {
	c := mustContract(t)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		for _, problem := range c.check(r, body, rec.Result()) {
			t.Errorf("OpenAPI contract: %s %s answered %d %s: %s", r.Method, r.URL.RequestURI(), rec.Code,
				clipText(rec.Body.String(), 300), problem)
		}
		for name, values := range rec.Header() {
			w.Header()[name] = values
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return strings.TrimSpace(s)
}

// check returns what is wrong with one exchange, nothing when it keeps to
// the document.
func (c *contract) check(r *http.Request, body []byte, resp *http.Response) []string {
	respBody, _ := io.ReadAll(resp.Body)
	// The validator reads the request afresh; the API treats every body as
	// JSON whatever its Content-Type says, so the document's JSON schemas
	// apply to a body sent without one.
	req := r.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(body))
	if len(body) > 0 && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if req.URL.Host == "" {
		req.URL.Scheme, req.URL.Host = "http", "localhost:8080"
	}
	route, pathParams, err := c.router.FindRoute(req)
	// A path the router would clean reaches no route: it is refused first.
	if err == nil && path.Clean(req.URL.Path) != req.URL.Path {
		err = errors.New("a non-canonical path")
	}
	if err != nil {
		if testOnlyPaths[r.URL.Path] {
			return nil
		}
		if resp.StatusCode < 400 {
			return []string{"no route of the document matches: " + err.Error()}
		}
		return c.checkErrorBody(respBody)
	}
	input := &openapi3filter.RequestValidationInput{
		Request:    req,
		PathParams: pathParams,
		Route:      route,
		Options: &openapi3filter.Options{
			// Tokens are the API's to judge; the answers for a missing or
			// wrong one are checked like any other.
			AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		},
	}
	var problems []string
	if err := openapi3filter.ValidateRequest(context.Background(), input); err != nil && resp.StatusCode < 400 {
		problems = append(problems, "the document refuses the request the API accepted: "+err.Error())
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: input,
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	out.SetBodyBytes(respBody)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		problems = append(problems, "the answer does not match the document: "+err.Error())
	}
	return problems
}

// checkErrorBody holds an answer of no documented route to the Error
// schema: the mux's own 404s and 405s are errors like any other.
func (c *contract) checkErrorBody(body []byte) []string {
	schema := c.doc.Components.Schemas["Error"]
	value, err := decodeJSONValue(body)
	if err == nil {
		err = schema.Value.VisitJSON(value, openapi3.EnableJSONSchema2020())
	}
	if err != nil {
		return []string{"the error body does not match the Error schema: " + err.Error()}
	}
	return nil
}

func decodeJSONValue(body []byte) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// TestContractCoversEveryRoute: every route the server registers is in the
// document, with the same method and path template, and the document has
// no route the server does not serve.
func TestContractCoversEveryRoute(t *testing.T) {
	c := mustContract(t)
	server := New(Options{Gatherer: prometheus.NewRegistry(), ControlPlane: &service.ControlPlane{}})
	served := map[string]bool{}
	for _, pattern := range server.patterns {
		served[pattern] = true
	}
	documented := map[string]bool{}
	for path, item := range c.doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	for _, missing := range difference(served, documented) {
		t.Errorf("%s is served but not in internal/openapi/openapi.yaml", missing)
	}
	for _, extra := range difference(documented, served) {
		t.Errorf("internal/openapi/openapi.yaml documents %s, which the server does not serve", extra)
	}
}

// difference lists the keys of a missing from b, sorted.
func difference(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// TestContractCatchesAnUndocumentedField: the check is not a formality. An
// answer with a field the document lacks, or without one it requires, or
// with an undocumented status, is reported.
func TestContractCatchesAnUndocumentedField(t *testing.T) {
	c := mustContract(t)
	cases := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"as documented", 200, `{"status":"ok"}`, ""},
		{"an extra field", 200, `{"status":"ok","uptime":3}`, "uptime"},
		{"a wrong value", 200, `{"status":"fine"}`, "status"},
		{"an undocumented status", 418, `{"code":"teapot","message":"no"}`, "status is not supported"},
	}
	for _, tc := range cases {
		req := httptest.NewRequest("GET", "/healthz", nil)
		resp := &http.Response{StatusCode: tc.status, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(tc.body))}
		problems := c.check(req, nil, resp)
		switch {
		case tc.want == "" && len(problems) > 0:
			t.Errorf("%s: reported %v", tc.name, problems)
		case tc.want != "" && (len(problems) == 0 || !strings.Contains(strings.Join(problems, " "), tc.want)):
			t.Errorf("%s: reported %v, want a problem naming %q", tc.name, problems, tc.want)
		}
	}
	// A request the document refuses but the API accepts is reported too.
	req := httptest.NewRequest("POST", "/admin/tenants", strings.NewReader(`{"id":"acme","color":"red"}`))
	resp := &http.Response{StatusCode: 201, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"id":"acme","status":"active","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}`))}
	if problems := c.check(req, []byte(`{"id":"acme","color":"red"}`), resp); len(problems) == 0 ||
		!strings.Contains(problems[0], "refuses the request") {
		t.Errorf("an accepted request with an unknown field: reported %v", problems)
	}
}

// TestOpenAPIDocumentIsServed: GET /openapi.json needs no credentials,
// answers the embedded document byte for byte, and revalidates by ETag.
func TestOpenAPIDocumentIsServed(t *testing.T) {
	want, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	h := enforceContract(t, New(Options{}))
	get := func(header map[string]string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/openapi.json", nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	first := get(nil)
	etag := first.Header().Get("ETag")
	if first.Code != http.StatusOK || !bytes.Equal(first.Body.Bytes(), want) || etag == "" {
		t.Fatalf("GET /openapi.json = %d, ETag %q, %d bytes; want 200, an ETag and the %d embedded bytes",
			first.Code, etag, first.Body.Len(), len(want))
	}
	cases := []struct {
		ifNoneMatch string
		want        int
	}{
		{etag, http.StatusNotModified},
		{`"other", ` + etag, http.StatusNotModified},
		{"W/" + etag, http.StatusNotModified},
		{"*", http.StatusNotModified},
		{`"other"`, http.StatusOK},
		{`"a,b"`, http.StatusOK},
	}
	for _, c := range cases {
		if got := get(map[string]string{"If-None-Match": c.ifNoneMatch}); got.Code != c.want || got.Header().Get("ETag") != etag {
			t.Errorf("If-None-Match %s: %d, ETag %q; want %d", c.ifNoneMatch, got.Code, got.Header().Get("ETag"), c.want)
		}
	}
}
