package listen

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/pkg/webhook"
)

const testSecret = "whsec_listen-test-secret-0123456789"

var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// signed is a delivery of event id as the hub sends it, signed with secret.
func signed(secret, eventType, eventID, deliveryID, body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body))
	webhook.SignHeader(r.Header, []string{secret}, testNow.Unix(), []byte(body))
	r.Header.Set(webhook.HeaderEventType, eventType)
	r.Header.Set(webhook.HeaderEventID, eventID)
	r.Header.Set(webhook.HeaderDeliveryID, deliveryID)
	r.Header.Set("Content-Type", "application/json")
	return r
}

func TestReceiverVerdicts(t *testing.T) {
	cases := []struct {
		name       string
		failRate   float64
		requests   []*http.Request
		wantStatus []int
		wantLines  []string
	}{
		{
			name: "a delivery, then its retry",
			requests: []*http.Request{
				signed(testSecret, "transaction.posted", "ev-1", "del-1", `{"amount":1}`),
				signed(testSecret, "transaction.posted", "ev-1", "del-2", `{"amount":1}`),
			},
			wantStatus: []int{200, 200},
			wantLines: []string{
				"2026-01-02T03:04:05Z transaction.posted event=ev-1 delivery=del-1 ok",
				"2026-01-02T03:04:05Z transaction.posted event=ev-1 delivery=del-2 ok duplicate",
			},
		},
		{
			name:       "the wrong secret",
			requests:   []*http.Request{signed("whsec_some-other-secret-0123456789", "transaction.posted", "ev-1", "del-1", `{}`)},
			wantStatus: []int{401},
			wantLines:  []string{"2026-01-02T03:04:05Z transaction.posted event=ev-1 delivery=del-1 signature_mismatch"},
		},
		{
			name:       "no signature at all",
			requests:   []*http.Request{httptest.NewRequest(http.MethodPost, "/", strings.NewReader("x\n"))},
			wantStatus: []int{401},
			wantLines:  []string{"2026-01-02T03:04:05Z - event=- delivery=- malformed_signature"},
		},
		{
			name:     "every delivery fails, probes still pass",
			failRate: 1,
			requests: []*http.Request{
				signed(testSecret, webhook.VerificationEventType, "probe-1", "del-0", `{}`),
				signed(testSecret, "transaction.posted", "ev-1", "del-1", `{}`),
				signed(testSecret, "transaction.posted", "ev-1", "del-2", `{}`),
			},
			wantStatus: []int{200, 503, 503},
			wantLines: []string{
				"2026-01-02T03:04:05Z hub.verification event=probe-1 delivery=del-0 ok (verification probe)",
				"2026-01-02T03:04:05Z transaction.posted event=ev-1 delivery=del-1 ok -> 503 (simulated failure)",
				"2026-01-02T03:04:05Z transaction.posted event=ev-1 delivery=del-2 ok duplicate -> 503 (simulated failure)",
			},
		},
		{
			name:       "a fail rate below the draw",
			failRate:   0.4,
			requests:   []*http.Request{signed(testSecret, "transaction.posted", "ev-1", "del-1", `{}`)},
			wantStatus: []int{200},
			wantLines:  []string{"2026-01-02T03:04:05Z transaction.posted event=ev-1 delivery=del-1 ok"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			opts := options{secrets: []string{testSecret}, failRate: tc.failRate, status: 503, format: formatText}
			rc := newReceiver(opts, &out, func() time.Time { return testNow }, func() float64 { return 0.5 })
			for i, r := range tc.requests {
				w := httptest.NewRecorder()
				rc.ServeHTTP(w, r)
				if w.Code != tc.wantStatus[i] {
					t.Errorf("request %d answered %d, want %d", i, w.Code, tc.wantStatus[i])
				}
			}
			if got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(tc.wantLines, "\n") {
				t.Errorf("printed\n%s\nwant\n%s", out.String(), strings.Join(tc.wantLines, "\n"))
			}
		})
	}
}

func TestReceiverJSONShowsHeadersAndBody(t *testing.T) {
	var out bytes.Buffer
	rc := newReceiver(options{secrets: []string{testSecret}, format: formatJSON, status: 500}, &out,
		func() time.Time { return testNow }, func() float64 { return 0 })
	rc.ServeHTTP(httptest.NewRecorder(), signed(testSecret, "transaction.posted", "ev-1", "del-1", `{"amount":1000}`))
	rc.ServeHTTP(httptest.NewRecorder(), signed(testSecret, "transaction.posted", "ev-2", "del-2", "\xff\x00binary"))

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one JSON object per request:\n%s", out.String())
	}
	var first, second Delivery
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
		t.Fatal(err)
	}
	if string(first.Body) != `{"amount":1000}` || first.BodyBase64 != "" || first.Verdict != "ok" || first.Status != 200 {
		t.Errorf("first %+v", first)
	}
	if first.Headers[webhook.HeaderTimestamp] != strconv.FormatInt(testNow.Unix(), 10) ||
		!strings.HasPrefix(first.Headers[webhook.HeaderSignature], "v1,sha256=") || first.Headers[webhook.HeaderEventID] != "ev-1" {
		t.Errorf("headers %v", first.Headers)
	}
	if second.Body != nil || second.BodyBase64 != "/wBiaW5hcnk=" {
		t.Errorf("a body that is not JSON must come as base64: %+v", second)
	}
}

func TestOptionsAreChecked(t *testing.T) {
	good := options{secrets: []string{testSecret}, status: 500, format: formatText}
	cases := map[string]func(o *options){
		"no secret":         func(o *options) { o.secrets = nil },
		"an empty secret":   func(o *options) { o.secrets = []string{""} },
		"a negative rate":   func(o *options) { o.failRate = -0.1 },
		"a rate above one":  func(o *options) { o.failRate = 1.5 },
		"a status too low":  func(o *options) { o.status = 99 },
		"an unknown format": func(o *options) { o.format = "yaml" },
	}
	if err := good.check(); err != nil {
		t.Fatalf("good options refused: %v", err)
	}
	for name, spoil := range cases {
		o := good
		spoil(&o)
		if o.check() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestDefaultAddrIsLoopbackOnly(t *testing.T) {
	host, port, err := net.SplitHostPort(DefaultAddr)
	if err != nil || port != "9000" {
		t.Fatalf("DefaultAddr %q: %v", DefaultAddr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		t.Errorf("DefaultAddr %q listens beyond loopback", DefaultAddr)
	}
}
