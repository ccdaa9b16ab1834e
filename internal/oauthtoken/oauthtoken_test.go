package oauthtoken

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

func TestRedactKeepsTheReasonNotTheBody(t *testing.T) {
	secretEcho := []byte(`{"error":"invalid_client","error_description":"bad secret s3cr3t"}`)
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"error code", &oauth2.RetrieveError{Response: &http.Response{Status: "401 Unauthorized"}, Body: secretEcho, ErrorCode: "invalid_client"}, "the token endpoint answered invalid_client"},
		{"status only", &oauth2.RetrieveError{Response: &http.Response{Status: "503 Service Unavailable"}, Body: secretEcho}, "the token endpoint answered 503 Service Unavailable"},
		{"nothing known", &oauth2.RetrieveError{Body: secretEcho}, "the token endpoint answered a refusal"},
		{"network", errors.New("dial tcp: connection refused"), "dial tcp: connection refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Redact(c.err).Error()
			if got != c.want || strings.Contains(got, "s3cr3t") {
				t.Fatalf("Redact = %q, want %q", got, c.want)
			}
		})
	}
}
