package subs

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/iostreams"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/testutil/testpki"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// TestGetTableShowsMoreThanTheList holds `subs get -o table` to what a
// support engineer asks after the list row: the retry settings, why it is
// disabled, what holds deliveries back and when it was made.
func TestGetTableShowsMoreThanTheList(t *testing.T) {
	at := func(s string) *time.Time { v, _ := time.Parse(time.RFC3339, s); return &v }
	reason, origin, filter := "auto_disabled", "midaz", "data.amount > 100"
	until := at("2026-12-01T10:00:30Z")
	sub := hubapi.Subscription{
		ID: "0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b", Name: "ledger", EventTypes: []string{"transaction.*"},
		Sink: map[string]any{"type": "webhook", "url": "https://hooks.example/ledger",
			"headers": map[string]any{"X-Route": "ledger", "X-Api-Version": "2"},
			"auth":    map[string]any{"type": "basic", "username": "hub", "password": hubapi.Masked}}, SchemaMajor: 1,
		Origin: &origin, Filter: &filter, RetrySchedule: []string{"0s", "5s", "1m"}, AttemptTimeout: "10s",
		Enabled: false, DisabledReason: &reason, VerificationState: "failed", VerificationError: "connection refused",
		FailingSince: at("2026-11-25T10:00:00Z"), LastFailureAt: at("2026-12-01T09:59:00Z"),
		Breaker:   &hubapi.Breaker{State: hubapi.BreakerOpen, OpenUntil: until, Instances: 2},
		CreatedAt: *at("2026-11-20T08:00:00Z"), UpdatedAt: *at("2026-12-01T10:00:00Z"),
	}
	ios, _, out, _ := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios}
	if err := output.New(ios, output.Table).Print(sub, func(tw *output.TableWriter) { subscriptionTable(tw, f, sub) }); err != nil {
		t.Fatal(err)
	}
	want := [][2]string{
		{"name", "ledger"},
		{"sink", "webhook https://hooks.example/ledger"},
		{"origin", "midaz"},
		{"filter", "data.amount > 100"},
		{"retry schedule", "0s 5s 1m"},
		{"attempt timeout", "10s"},
		{"delivery", "disabled (auto_disabled)"},
		{"verification", "failed: connection refused"},
		{"breaker", "open until 2026-12-01T10:00:30Z (2 instances)"},
		{"header", "X-Api-Version: 2"},
		{"header", "X-Route: ledger"},
		{"auth", "basic (password ****, username hub)"},
		{"failure span", "failing since 2026-11-25T10:00:00Z, last failure 2026-12-01T09:59:00Z"},
		{"created", "2026-11-20T08:00:00Z"},
	}
	lines := strings.Split(out.String(), "\n")
	for _, w := range want {
		found := false
		for _, l := range lines {
			if field, value, ok := strings.Cut(strings.TrimSpace(l), "  "); ok && field == w[0] && strings.TrimSpace(value) == w[1] {
				found = true
			}
		}
		if !found {
			t.Errorf("no row %q = %q in\n%s", w[0], w[1], out.String())
		}
	}

	if strings.Index(out.String(), "X-Api-Version") > strings.Index(out.String(), "X-Route") {
		t.Errorf("headers not in order of name:\n%s", out.String())
	}

	out.Reset()
	plain := hubapi.Subscription{ID: sub.ID, Name: "p", Sink: map[string]any{"type": "pull"}, EventTypes: []string{"*"},
		SchemaMajor: 1, AttemptTimeout: "10s", Enabled: true, VerificationState: "active"}
	if err := output.New(ios, output.Table).Print(plain, func(tw *output.TableWriter) { subscriptionTable(tw, f, plain) }); err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"origin", "filter", "breaker", "failure span", "header", "auth"} {
		if strings.Contains(out.String(), absent) {
			t.Errorf("a pull subscription without them shows %q:\n%s", absent, out.String())
		}
	}
	if !strings.Contains(out.String(), "default") {
		t.Errorf("no default retry schedule shown:\n%s", out.String())
	}
}

func TestAuthSummary(t *testing.T) {
	leaf := testpki.MustCA(t, "display CA").Client(t, "hubctl-delivery")
	cert, err := x509.ParseCertificate(leaf.TLS.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		auth map[string]any
		want string
	}{
		{map[string]any{"type": "bearer", "token": hubapi.Masked}, "bearer (token ****)"},
		{map[string]any{"type": "basic", "username": "hub", "password": hubapi.Masked}, "basic (password ****, username hub)"},
		{map[string]any{"type": "oauth2_client_credentials", "client_id": "c", "scopes": []any{"a", "b"}}, `oauth2_client_credentials (client_id c, scopes ["a","b"])`},
		{map[string]any{"type": "none"}, "none"},
		{map[string]any{"type": "mtls", "client_cert": string(leaf.CertPEM), "client_key": hubapi.Masked},
			"mtls (client_cert CN=hubctl-delivery, expires " + cert.NotAfter.UTC().Format(time.RFC3339) + ", client_key ****)"},
	}
	for _, c := range cases {
		if got := authSummary(c.auth); got != c.want {
			t.Errorf("authSummary(%v) = %q, want %q", c.auth, got, c.want)
		}
	}
}

func TestGetTableShowsTheSignatureScheme(t *testing.T) {
	sub := hubapi.Subscription{ID: "0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b", Name: "std", EventTypes: []string{"*"},
		Sink: map[string]any{"type": "webhook", "url": "https://hooks.example/std"}, SchemaMajor: 1, AttemptTimeout: "10s",
		Enabled: true, VerificationState: "active", SigningSecret: hubapi.Masked, SignatureScheme: "standard-webhooks"}
	ios, _, out, _ := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios}
	if err := output.New(ios, output.Table).Print(sub, func(tw *output.TableWriter) { subscriptionTable(tw, f, sub) }); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range strings.Split(out.String(), "\n") {
		if field, value, ok := strings.Cut(strings.TrimSpace(l), "  "); ok && field == "signature scheme" && strings.TrimSpace(value) == "standard-webhooks" {
			found = true
		}
	}
	if !found {
		t.Errorf("no signature scheme row in\n%s", out.String())
	}
}
