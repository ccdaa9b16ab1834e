package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hubctl/hubctl/internal/jsonpos"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// decodeJSON reads r's body, which must be one JSON object with only the
// fields of dst, into dst. Every way a body can be wrong is a 400 naming
// what is wrong: the size, the offset of a syntax error, the field that is
// unknown or of the wrong type.
func decodeJSON(r *http.Request, dst any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeJSONBody(body, dst)
}

// decodeOptionalJSON is decodeJSON for a route whose body may be left out:
// a body of nothing but whitespace leaves dst as it is. Anything else is
// held to decodeJSON's rules, so a mistyped field is refused rather than
// quietly ignored.
func decodeOptionalJSON(r *http.Request, dst any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if bytes.IndexFunc(body, func(r rune) bool { return !isJSONSpace(r) }) < 0 {
		return nil
	}
	return decodeJSONBody(body, dst)
}

// readBody reads the whole body, within the middleware's size limit.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err == nil {
		return body, nil
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, &apiError{status: http.StatusBadRequest, code: CodeRequestTooLarge,
			message: fmt.Sprintf("the request body exceeds %d bytes", tooLarge.Limit),
			details: map[string]any{"limit_bytes": tooLarge.Limit}}
	}
	if r.Context().Err() != nil {
		return nil, r.Context().Err()
	}
	return nil, &apiError{status: http.StatusBadRequest, code: CodeInvalidRequest, message: "the request body could not be read"}
}

// decodeJSONBody is decodeJSON once the body is read.
func decodeJSONBody(body []byte, dst any) error {
	start := bytes.IndexFunc(body, func(r rune) bool { return !isJSONSpace(r) })
	if start < 0 {
		return &apiError{status: http.StatusBadRequest, code: CodeInvalidRequest, message: "a JSON object request body is required"}
	}
	// Checked up front because null would decode into dst without error,
	// silently standing for an empty object.
	if body[start] != '{' {
		return bodyErrorAt("the request body must be a JSON object", body, int64(start))
	}
	if err := checkJSONText(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err, body)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		offset := end + int64(bytes.IndexFunc(body[end:], func(r rune) bool { return !isJSONSpace(r) }))
		return bodyErrorAt("unexpected data after the JSON object", body, offset)
	}
	return nil
}

// bodyErrorAt is a 400 for what is wrong at byte offset of body, placed
// by line and column in the message and by offset in details.
func bodyErrorAt(what string, body []byte, offset int64) *apiError {
	return &apiError{status: http.StatusBadRequest, code: CodeInvalidRequest,
		message: what + " at " + jsonpos.At(body, offset).String(), details: map[string]any{"offset": offset}}
}

func isJSONSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\r' || r == '\n' }

// decodeError turns encoding/json's errors into 400s. Only an
// InvalidUnmarshalError (a bad dst) is the hub's own fault.
func decodeError(err error, body []byte) error {
	var (
		typeErr     *json.UnmarshalTypeError
		invalidDest *json.InvalidUnmarshalError
	)
	if pos, ok := jsonpos.Of(err, body); ok {
		return &apiError{status: http.StatusBadRequest, code: CodeInvalidRequest,
			message: "the request body is not valid JSON: " + jsonpos.Describe(err, body), details: map[string]any{"offset": pos.Offset}}
	}
	switch {
	case errors.As(err, &invalidDest):
		return err
	case errors.As(err, &typeErr):
		return invalidRequest(typeErr.Field, fmt.Sprintf("field %q must be %s, not a JSON %s", typeErr.Field, describeJSONType(typeErr.Type), typeErr.Value))
	}
	// encoding/json has no type for an unknown field, only this message.
	if quoted, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field, unquoteErr := strconv.Unquote(quoted)
		if unquoteErr != nil {
			field = quoted
		}
		return invalidRequest(field, fmt.Sprintf("unknown field %q", field))
	}
	// Errors of a field's own UnmarshalJSON (a malformed time, say).
	return &apiError{status: http.StatusBadRequest, code: CodeInvalidRequest, message: "invalid request body: " + err.Error()}
}

// describeJSONType names the JSON a Go type is decoded from.
func describeJSONType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer in the range of " + t.Kind().String()
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return describeJSONType(t.Elem())
	}
	return "a " + t.String()
}

// listParams reads the limit and cursor query parameters of a listing. The
// service checks the limit's range; here it must be a number at all.
func listParams(q url.Values) (hubapi.ListParams, error) {
	var p hubapi.ListParams
	limit, present, err := singleParam(q, "limit")
	if err != nil {
		return p, err
	}
	if present {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 {
			return p, invalidRequest("limit", fmt.Sprintf("invalid limit %q: must be an integer between 1 and %d", limit, hubapi.MaxPageLimit))
		}
		p.Limit = n
	}
	if p.Cursor, _, err = singleParam(q, "cursor"); err != nil {
		return p, err
	}
	return p, nil
}

// maxFilterLength bounds a free-text filter; no reason code or topic name
// comes close.
const maxFilterLength = 256

// filterParam reads an optional exact-match filter. It must be text the
// database can compare: UTF-8 without control characters (PostgreSQL
// refuses NUL outright).
func filterParam(q url.Values, name string) (string, error) {
	value, _, err := singleParam(q, name)
	if err != nil {
		return "", err
	}
	if len(value) > maxFilterLength || !utf8.ValidString(value) || strings.ContainsFunc(value, unicode.IsControl) {
		return "", invalidRequest(name, fmt.Sprintf("invalid %s: at most %d characters of text without control characters", name, maxFilterLength))
	}
	return value, nil
}

// listing is the query of a listing: its page.
var listing = []string{"limit", "cursor"}

// queryParams names the query parameters each /admin and /v1 route reads;
// a route not listed reads none. checkQuery holds every request to it.
var queryParams = map[string][]string{
	"GET /admin/tenants":                    listing,
	"GET /admin/tenants/{id}/keys":          listing,
	"GET /admin/quarantine":                 append([]string{"reason", "topic"}, listing...),
	"DELETE /admin/tenants/{id}":            {"purge"},
	"GET /v1/subscriptions":                 listing,
	"GET /v1/subscriptions/{id}/deliveries": append([]string{"state", "since", "until"}, listing...),
	"GET /v1/delivery-counts":               {"subscription_ids"},
	"GET /v1/dead-letters":                  append([]string{"subscription_id", "reason", "since", "until"}, listing...),
	"GET /v1/inbox":                         append([]string{"type", "source", "subject", "since", "until"}, listing...),
	"GET /v1/events":                        {"subscription_id", "limit", "after"},
}

// checkQuery is the one rule for query parameters: a parameter the route
// does not read, or one given more than once, is refused, naming it, so
// a mistyped filter never silently answers everything and
// ?purge=true&purge=false cannot mean one thing here and another to a
// proxy. Parameters are checked in name order, so a request with several
// wrong ones always names the same one.
func checkQuery(r *http.Request) error {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return &apiError{status: http.StatusBadRequest, code: CodeInvalidRequest, message: "the query string is malformed: " + err.Error()}
	}
	allowed := queryParams[r.Pattern]
	names := slices.Sorted(maps.Keys(q))
	for _, name := range names {
		if !slices.Contains(allowed, name) {
			if len(allowed) == 0 {
				return invalidRequest(name, fmt.Sprintf("unknown query parameter %q: this route takes none", name))
			}
			return invalidRequest(name, fmt.Sprintf("unknown query parameter %q: this route takes %s", name, strings.Join(allowed, ", ")))
		}
		if _, _, err := singleParam(q, name); err != nil {
			return err
		}
	}
	return nil
}

// singleParam reads a query parameter that may be given at most once, so
// that ?limit=1&limit=1000 cannot mean one thing here and another to a
// proxy.
func singleParam(q url.Values, name string) (value string, present bool, err error) {
	values, present := q[name]
	switch {
	case !present:
		return "", false, nil
	case len(values) > 1:
		return "", true, invalidRequest(name, fmt.Sprintf("query parameter %s is given more than once", name))
	}
	return values[0], true, nil
}
