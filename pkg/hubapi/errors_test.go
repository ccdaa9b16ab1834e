package hubapi

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckTenantID(t *testing.T) {
	cases := []struct {
		id   string
		want bool
	}{
		{"acme", true},
		{"A", true},
		{"9", true},
		{"acme.corp_eu-1", true},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
		{"", false},
		{".acme", false},
		{"-acme", false},
		{"_acme", false},
		{"ac me", false},
		{"acme/1", false},
		{"açme", false},
		{"acme\n", false},
	}
	for _, c := range cases {
		err := CheckTenantID(c.id)
		if (err == nil) != c.want {
			t.Errorf("CheckTenantID(%q) = %v, want valid = %v", c.id, err, c.want)
			continue
		}
		if err == nil {
			continue
		}
		var v *ValidationError
		if !errors.As(err, &v) || v.Field != "id" || v.Code != CodeInvalidRequest || !strings.Contains(v.Message, TenantIDRule) {
			t.Errorf("CheckTenantID(%q) = %#v, want a ValidationError on id naming the rule", c.id, err)
		}
	}
}

// TestErrorCodeReadsEitherImplementation: the code of a typed error
// returned in process and that of an API answer the client wraps.
func TestErrorCodeReadsEitherImplementation(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&ValidationError{Code: CodeInvalidRequest}, CodeInvalidRequest},
		{&ForbiddenError{Code: CodeForbidden}, CodeForbidden},
		{&NotFoundError{Code: CodeTenantNotFound}, CodeTenantNotFound},
		{&ConflictError{Code: "tenant_already_exists"}, "tenant_already_exists"},
		{&UnprocessableError{Code: "verification_failed"}, "verification_failed"},
		{wrapped{&Error{Code: "delivery_not_found"}}, "delivery_not_found"},
		{errors.New("connection refused"), ""},
		{nil, ""},
	}
	for _, c := range cases {
		if got := ErrorCode(c.err); got != c.want {
			t.Errorf("ErrorCode(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// wrapped stands for a client's error, which unwraps to the answer's body.
type wrapped struct{ body *Error }

func (w wrapped) Error() string { return w.body.Message }
func (w wrapped) Unwrap() error { return w.body }
