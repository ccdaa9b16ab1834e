package awsclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqsapi "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hubctl/hubctl/internal/netguard"
)

func TestCheckRegion(t *testing.T) {
	tests := []struct{ region, want string }{
		{"us-east-1", ""},
		{"eu-central-2", ""},
		{"x", ""},
		{strings.Repeat("a", 63), ""},
		{"", "is required"},
		{strings.Repeat("a", 64), "at most 63"},
		{"US-EAST-1", "AWS region"},
		{"us-east-1.evil.com", "AWS region"},
		{"evil.example.com#", "AWS region"},
		{"us_east_1", "AWS region"},
		{"-us-east-1", "hyphen"},
		{"us-east-1-", "hyphen"},
	}
	for _, tc := range tests {
		err := CheckRegion(tc.region)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckRegion(%q) = %v, want %q", tc.region, err, tc.want)
		}
	}
}

func TestCheckKey(t *testing.T) {
	tests := []struct{ key, want string }{
		{"AKIAEXAMPLEKEYID0001", ""},
		{"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""},
		{"!~", ""},
		{strings.Repeat("k", MaxKeyLength), ""},
		{strings.Repeat("k", MaxKeyLength+1), "at most 256"},
		{"pasted\n", "printable ASCII"},
		{"with space", "printable ASCII"},
		{"ключ", "printable ASCII"},
		{"del\x7f", "printable ASCII"},
	}
	for _, tc := range tests {
		err := CheckKey(tc.key)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckKey(%q) = %v, want %q", tc.key, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), tc.key) {
			t.Errorf("CheckKey error %q quotes the key", err)
		}
	}
}

func TestCheckEndpoint(t *testing.T) {
	tests := []struct {
		endpoint     string
		allowPrivate bool
		want         string
	}{
		{"https://sqs.example.com", false, ""},
		{"http://localhost:4566", false, ""}, // host names are judged at dial time
		{"http://127.0.0.1:4566", true, ""},
		{"http://127.0.0.1:4566", false, "refused"},
		{"http://169.254.169.254", false, "refused"},
		{"ftp://sqs.example.com", false, "scheme"},
		{"https://u:p@sqs.example.com", false, "user information"},
		{"https://sqs.example.com/?x=1", false, "query"},
		{"https://sqs.example.com/" + strings.Repeat("p", MaxEndpointLength), false, "at most"},
	}
	for _, tc := range tests {
		err := CheckEndpoint(tc.endpoint, tc.allowPrivate)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckEndpoint(%q, %v) = %v, want %q", tc.endpoint, tc.allowPrivate, err, tc.want)
		}
		viaClients := NewClients(Options{AllowPrivate: tc.allowPrivate}).CheckEndpoint(tc.endpoint)
		if (viaClients == nil) != (err == nil) {
			t.Errorf("Clients.CheckEndpoint(%q) = %v, CheckEndpoint = %v", tc.endpoint, viaClients, err)
		}
	}
}

func TestScrub(t *testing.T) {
	creds := Credentials{AccessKeyID: "AKIDKEY", SecretAccessKey: "SECRETVALUE"}
	if got := creds.Scrub("key AKIDKEY signed with SECRETVALUE"); got != "key **** signed with ****" {
		t.Errorf("Scrub = %q", got)
	}
	// A secret containing the key id is masked whole, not around it.
	nested := Credentials{AccessKeyID: "KEY", SecretAccessKey: "xxKEYxx"}
	if got := nested.Scrub("secret xxKEYxx, id KEY"); got != "secret ****, id ****" {
		t.Errorf("Scrub = %q", got)
	}
	if got := (Credentials{}).Scrub("nothing to hide"); got != "nothing to hide" {
		t.Errorf("Scrub with no credentials = %q", got)
	}
}

// TestAddressPolicy sends to a loopback server by IP address: the override
// client always applies the policy; the regional one reaches AWS as the SDK
// does by default.
func TestAddressPolicy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	get := func(c *http.Client) error {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	refused := func(err error) bool {
		_, ok := errors.AsType[*netguard.RefusedError](err)
		return ok
	}

	open := NewClients(Options{})
	if err := get(open.For("")); err != nil {
		t.Errorf("regional client, unguarded: %v", err)
	}
	if err := get(open.For(srv.URL)); !refused(err) {
		t.Errorf("override client = %v, want the address policy's refusal", err)
	}
	allowed := NewClients(Options{AllowPrivate: true})
	for _, endpoint := range []string{"", srv.URL} {
		if err := get(allowed.For(endpoint)); err != nil {
			t.Errorf("with private sinks allowed, endpoint %q: %v", endpoint, err)
		}
	}
	open.CloseIdleConnections()
	allowed.CloseIdleConnections()
}

// TestConfigMakesOneAttempt: an SDK client built from Config sends to the
// endpoint override, signs with the credentials and never retries.
func TestConfigMakesOneAttempt(t *testing.T) {
	var requests atomic.Int32
	var authorization atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		authorization.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"__type":"InternalError","message":"try again"}`))
	}))
	t.Cleanup(srv.Close)
	clients := NewClients(Options{AllowPrivate: true})
	creds := Credentials{AccessKeyID: "AKIAEXAMPLEKEYID0001", SecretAccessKey: "secret"}
	cfg := clients.Config("eu-west-1", srv.URL, creds)
	if aws.ToString(cfg.BaseEndpoint) != srv.URL || cfg.HTTPClient != clients.For(srv.URL) {
		t.Fatalf("Config does not send to the endpoint override")
	}

	client := sqsapi.NewFromConfig(cfg)
	_, err := client.GetQueueUrl(context.Background(), &sqsapi.GetQueueUrlInput{QueueName: aws.String("q")})
	if err == nil {
		t.Fatal("GetQueueUrl succeeded against a server answering 500")
	}
	if n := requests.Load(); n != 1 {
		t.Fatalf("the server saw %d requests, want 1: retries must be off", n)
	}
	if auth, _ := authorization.Load().(string); !strings.Contains(auth, "Credential=AKIAEXAMPLEKEYID0001/") || !strings.Contains(auth, "/eu-west-1/sqs/") {
		t.Fatalf("Authorization %q, want the configured key and region", auth)
	}
	if regional := clients.Config("eu-west-1", "", creds); regional.BaseEndpoint != nil || regional.HTTPClient != clients.For("") {
		t.Fatal("Config without an endpoint does not go to AWS's own")
	}
}
