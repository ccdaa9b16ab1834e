package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/testutil/httprecord"
	whsign "github.com/hubctl/hubctl/pkg/webhook"
)

const (
	newSecret = "whsec_bmV3LXNlY3JldC1mb3ItdGhlLXdlYmhvb2stdGVzdHM"
	oldSecret = "whsec_b2xkLXNlY3JldC1mb3ItdGhlLXdlYmhvb2stdGVzdHM"
	testAgent = "hubctl/test"
	// queryToken stands for a credential a tenant put in its URL's query;
	// no recorded error may repeat it.
	queryToken = "q-t0ken-in-the-url"
)

var testNow = time.Unix(1767225600, 0)

// receiver is a real HTTP server on loopback that records what arrives and
// counts the connections opened to it.
type receiver struct{ *httprecord.Server }

// startReceiver answers with respond, or 204 when respond is nil.
func startReceiver(t *testing.T, respond http.HandlerFunc) *receiver {
	t.Helper()
	var opts httprecord.Options
	if respond != nil {
		opts.Respond = func(w http.ResponseWriter, r *http.Request, _ int) { respond(w, r) }
	}
	return &receiver{httprecord.Start(t, opts)}
}

// hookURL is where the sinks post: a path and a query holding a token.
func (r *receiver) hookURL() string { return r.URL + "/hooks/hubctl?token=" + queryToken }

func newTestType(t *testing.T, opts Options) *Type {
	t.Helper()
	if opts.UserAgent == "" {
		opts.UserAgent = testAgent
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return testNow }
	}
	typ := NewType(opts)
	t.Cleanup(typ.CloseIdleConnections)
	return typ
}

// openSink opens a sink on a stored configuration, as dispatch does, so
// that a guarded type can be aimed at a loopback receiver.
func openSink(t *testing.T, typ *Type, rawURL string, secrets ...string) sink.Sink {
	t.Helper()
	if len(secrets) == 0 {
		secrets = []string{newSecret}
	}
	public, err := json.Marshal(publicConfig{URL: rawURL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := typ.Open(sink.Config{Public: public}, secrets)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// testDelivery has every attribute set, and a payload that only survives
// if it is sent byte for byte: odd spacing, a non-ASCII rune, invalid UTF-8.
func testDelivery() sink.Delivery {
	return sink.Delivery{
		DeliveryID:      "0190f5c2-7a3b-7cc4-9a4e-2d1f3b5c6d7e",
		EventID:         "0190b6a2-7c1e-7d3a-9f00-123456789abc",
		EventKey:        "transaction.posted",
		TenantID:        "acme",
		Source:          "midaz",
		Type:            "studio.lerian.midaz.transaction.posted",
		Time:            testNow,
		SchemaVersion:   "1.2.0",
		DataContentType: "application/vnd.lerian+json; charset=utf-8",
		TraceParent:     "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		TraceState:      "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
		Payload:         []byte("{ \"amount\" :1000,\n\t\"note\":\"café \xff\" }  "),
		Timeout:         5 * time.Second,
	}
}

// independentSignature recomputes the signature (docs/consuming.md) without pkg/webhook.
func independentSignature(secret, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v1:" + timestamp + "."))
	mac.Write(body)
	return "v1,sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func TestDeliverSendsTheSpecRequest(t *testing.T) {
	rcv := startReceiver(t, nil)
	s := openSink(t, newTestType(t, Options{AllowPrivate: true}), rcv.hookURL(), newSecret)
	d := testDelivery()

	out := s.Deliver(t.Context(), d)
	if !out.OK || out.StatusCode != http.StatusNoContent || out.Error != "" {
		t.Fatalf("Outcome = %+v, want OK with 204", out)
	}
	got := rcv.Requests()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests, want exactly 1", len(got))
	}
	req := got[0]
	if req.Method != http.MethodPost || req.URI != "/hooks/hubctl?token="+queryToken {
		t.Errorf("request line %s %s, want POST to the configured path and query", req.Method, req.URI)
	}
	if !bytes.Equal(req.Body, d.Payload) {
		t.Errorf("body %q, want the payload byte for byte %q", req.Body, d.Payload)
	}
	want := http.Header{
		"Content-Type":            {d.DataContentType},
		"Content-Length":          {"39"},
		"User-Agent":              {testAgent},
		"X-Webhook-Timestamp":     {"1767225600"},
		"X-Webhook-Signature":     {independentSignature(newSecret, "1767225600", d.Payload)},
		"X-Lerian-Event-Id":       {d.EventID},
		"X-Lerian-Event-Type":     {"transaction.posted"},
		"X-Lerian-Tenant-Id":      {"acme"},
		"X-Lerian-Delivery-Id":    {d.DeliveryID},
		"X-Lerian-Schema-Version": {"1.2.0"},
		"Traceparent":             {d.TraceParent},
		"Tracestate":              {d.TraceState},
	}
	if len(d.Payload) != 39 {
		t.Fatalf("test payload is %d bytes; update Content-Length", len(d.Payload))
	}
	if !reflect.DeepEqual(req.Header, want) {
		t.Errorf("headers:\n got  %v\n want %v", req.Header, want)
	}
}

func TestDeliverDefaultsAndOptionalHeaders(t *testing.T) {
	rcv := startReceiver(t, nil)
	s := openSink(t, newTestType(t, Options{AllowPrivate: true}), rcv.hookURL())
	d := testDelivery()
	d.DataContentType = ""
	d.TraceParent, d.TraceState = "", ""

	if out := s.Deliver(t.Context(), d); !out.OK {
		t.Fatalf("Outcome = %+v", out)
	}
	h := rcv.Requests()[0].Header
	if got := h.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", got)
	}
	for _, name := range []string{"Traceparent", "Tracestate", "Accept-Encoding"} {
		if _, present := h[name]; present {
			t.Errorf("%s sent, want it absent", name)
		}
	}
}

func TestDeliverSignsWithEverySecretDuringRotation(t *testing.T) {
	rcv := startReceiver(t, nil)
	s := openSink(t, newTestType(t, Options{AllowPrivate: true}), rcv.hookURL(), newSecret, oldSecret)
	d := testDelivery()

	if out := s.Deliver(t.Context(), d); !out.OK {
		t.Fatalf("Outcome = %+v", out)
	}
	req := rcv.Requests()[0]
	lines := req.Header.Values(whsign.HeaderSignature)
	wantLines := []string{
		independentSignature(newSecret, "1767225600", d.Payload),
		independentSignature(oldSecret, "1767225600", d.Payload),
	}
	if !slices.Equal(lines, wantLines) {
		t.Fatalf("signature lines %q, want the new secret's then the old one's %q", lines, wantLines)
	}
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(req.Body))
	r.Header = req.Header
	// A receiver holding only one of the two secrets accepts the delivery.
	for _, secret := range []string{newSecret, oldSecret} {
		if err := whsign.VerifyRequest(r, req.Body, []string{secret}, testNow, whsign.DefaultTolerance); err != nil {
			t.Errorf("receiver holding one secret: %v", err)
		}
	}
}

func TestDeliverStampsEachAttemptAndPassesIDsThrough(t *testing.T) {
	rcv := startReceiver(t, nil)
	var clock atomic.Int64
	clock.Store(testNow.Unix())
	typ := newTestType(t, Options{AllowPrivate: true, Now: func() time.Time { return time.Unix(clock.Load(), 0) }})
	s := openSink(t, typ, rcv.hookURL())

	first, second := testDelivery(), testDelivery()
	second.DeliveryID = "0190f5c2-7a3b-7cc4-9a4e-2d1f3b5c6d7f"
	s.Deliver(t.Context(), first)
	clock.Add(300)
	s.Deliver(t.Context(), second)

	got := rcv.Requests()
	if len(got) != 2 {
		t.Fatalf("got %d requests, want 2", len(got))
	}
	for i, want := range []struct{ deliveryID, timestamp string }{
		{first.DeliveryID, "1767225600"},
		{second.DeliveryID, "1767225900"},
	} {
		h := got[i].Header
		if h.Get(whsign.HeaderDeliveryID) != want.deliveryID || h.Get(whsign.HeaderTimestamp) != want.timestamp {
			t.Errorf("attempt %d: delivery id %q at %q, want %q at %q", i+1,
				h.Get(whsign.HeaderDeliveryID), h.Get(whsign.HeaderTimestamp), want.deliveryID, want.timestamp)
		}
		if h.Get(whsign.HeaderEventID) != first.EventID {
			t.Errorf("attempt %d: event id %q, want the stable %q", i+1, h.Get(whsign.HeaderEventID), first.EventID)
		}
		if want := independentSignature(newSecret, want.timestamp, first.Payload); h.Get(whsign.HeaderSignature) != want {
			t.Errorf("attempt %d: signature not over its own timestamp", i+1)
		}
	}
}

func TestDeliverDoesNotFollowRedirects(t *testing.T) {
	var followed atomic.Int64
	rcv := startReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed.Add(1)
			w.WriteHeader(http.StatusOK)
			return
		}
		http.Redirect(w, r, "/elsewhere?stolen=1", http.StatusTemporaryRedirect)
	})
	s := openSink(t, newTestType(t, Options{AllowPrivate: true}), rcv.hookURL())

	out := s.Deliver(t.Context(), testDelivery())
	if out.OK || out.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("Outcome = %+v, want a failure with status 307", out)
	}
	if want := "HTTP 307 Temporary Redirect: redirects are not followed"; out.Error != want {
		t.Fatalf("Error = %q, want %q", out.Error, want)
	}
	if followed.Load() != 0 || len(rcv.Requests()) != 1 {
		t.Fatalf("redirect followed: %d requests", len(rcv.Requests()))
	}
}

func TestDeliverHonoursTheAttemptTimeout(t *testing.T) {
	release := make(chan struct{})
	rcv := startReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) })
	s := openSink(t, newTestType(t, Options{AllowPrivate: true}), rcv.hookURL())

	d := testDelivery()
	d.Timeout = 150 * time.Millisecond
	start := time.Now()
	out := s.Deliver(t.Context(), d)
	elapsed := time.Since(start)

	if out.OK || out.StatusCode != 0 || out.Error != "no response within 150ms" {
		t.Fatalf("Outcome = %+v, want a timeout", out)
	}
	if elapsed < d.Timeout || elapsed > d.Timeout+2*time.Second {
		t.Fatalf("attempt took %v with a %v timeout", elapsed, d.Timeout)
	}
}

func TestDeliverReportsCancellation(t *testing.T) {
	rcv := startReceiver(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	s := openSink(t, newTestType(t, Options{AllowPrivate: true}), rcv.hookURL())
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)

	if out := s.Deliver(ctx, testDelivery()); out.OK || out.Error != "attempt cancelled" {
		t.Fatalf("Outcome = %+v, want a cancelled attempt", out)
	}
}

func TestDeliverStatusesAndRetryAfter(t *testing.T) {
	tests := []struct {
		name           string
		status         int
		retryAfter     string
		wantOK         bool
		wantError      string
		wantRetryAfter time.Duration
	}{
		{"200", http.StatusOK, "", true, "", 0},
		{"202", http.StatusAccepted, "", true, "", 0},
		{"400", http.StatusBadRequest, "", false, "HTTP 400 Bad Request", 0},
		{"429 with seconds", http.StatusTooManyRequests, "120", false, "HTTP 429 Too Many Requests", 2 * time.Minute},
		{"503 with a date", http.StatusServiceUnavailable, testNow.Add(90 * time.Second).UTC().Format(http.TimeFormat), false,
			"HTTP 503 Service Unavailable", 90 * time.Second},
		{"503 over the cap", http.StatusServiceUnavailable, "86400", false, "HTTP 503 Service Unavailable", 10 * time.Hour},
		{"500 ignores Retry-After", http.StatusInternalServerError, "120", false, "HTTP 500 Internal Server Error", 0},
		{"unregistered status", 599, "", false, "HTTP 599", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rcv := startReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(tc.status)
			})
			s := openSink(t, newTestType(t, Options{AllowPrivate: true}), rcv.hookURL())
			out := s.Deliver(t.Context(), testDelivery())
			if out.OK != tc.wantOK || out.StatusCode != tc.status || out.Error != tc.wantError || out.RetryAfter != tc.wantRetryAfter {
				t.Fatalf("Outcome = %+v, want ok=%v status=%d error=%q retryAfter=%v",
					out, tc.wantOK, tc.status, tc.wantError, tc.wantRetryAfter)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		value string
		want  time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"1", time.Second},
		{" 30 ", 30 * time.Second},
		{"36000", 10 * time.Hour},
		{"36001", 10 * time.Hour},
		{"99999999999999999999999", 10 * time.Hour},
		{"Thu, 01 Jan 2026 00:02:00 GMT", 2 * time.Minute},     // IMF-fixdate
		{"Thursday, 01-Jan-26 00:00:30 GMT", 30 * time.Second}, // RFC 850
		{"Thu Jan  1 01:00:00 2026", time.Hour},                // asctime
		{"Fri, 02 Jan 2026 00:00:00 GMT", 10 * time.Hour},      // a day away: capped
		{"Wed, 31 Dec 2025 23:59:00 GMT", 0},                   // already past
		{"-5", 0},
		{"+5", 0},
		{"1.5", 0},
		{"5s", 0},
		{"soon", 0},
	}
	for _, tc := range tests {
		if got := parseRetryAfter(tc.value, now); got != tc.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tc.value, got, tc.want)
		}
	}
}

func TestDeliverKeepsAtMostOneKiBOfTheResponse(t *testing.T) {
	long := bytes.Repeat([]byte("0123456789abcdef"), 300) // 4800 bytes
	tests := []struct {
		name string
		body []byte
		want []byte
	}{
		{"empty", nil, nil},
		{"short", []byte(`{"error":"account closed"}`), []byte(`{"error":"account closed"}`)},
		{"exactly 1 KiB", long[:1024], long[:1024]},
		{"longer", long, long[:sink.MaxResponseBytes]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rcv := startReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusUnprocessableEntity)
				w.Write(tc.body)
			})
			s := openSink(t, newTestType(t, Options{AllowPrivate: true}), rcv.hookURL())
			out := s.Deliver(t.Context(), testDelivery())
			if !bytes.Equal(out.Response, tc.want) {
				t.Fatalf("Response = %d bytes %q, want %d bytes", len(out.Response), out.Response, len(tc.want))
			}
		})
	}
}

func TestDeliverReusesOneConnection(t *testing.T) {
	var n atomic.Int64
	rcv := startReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		// Alternate short answers with ones longer than the snippet: those
		// must be drained for the connection to be reused.
		if n.Add(1)%2 == 0 {
			w.Write(bytes.Repeat([]byte("x"), 8<<10))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	typ := newTestType(t, Options{AllowPrivate: true})
	// Sinks of different subscriptions share the type's connections.
	sinks := []sink.Sink{openSink(t, typ, rcv.hookURL()), openSink(t, typ, rcv.URL+"/other", oldSecret)}

	for i := range 20 {
		if out := sinks[i%2].Deliver(t.Context(), testDelivery()); !out.OK {
			t.Fatalf("delivery %d: %+v", i, out)
		}
	}
	if got := rcv.NewConns.Load(); got != 1 {
		t.Fatalf("20 deliveries opened %d connections, want 1", got)
	}
}

func TestDeliverOverTLSDialsTheCheckedAddressButVerifiesTheName(t *testing.T) {
	var sawTLS atomic.Uint32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawTLS.Store(uint32(r.TLS.Version))
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).Port

	// httptest's certificate is valid for example.com; the resolver sends
	// that name to the loopback server, as DNS would to a real receiver.
	resolver := fixedResolver{"example.com": netip.MustParseAddr("127.0.0.1")}
	typ := newTestType(t, Options{AllowPrivate: true, Resolver: resolver, RootCAs: certPool(srv)})
	s := openSink(t, typ, "https://example.com:"+strconv.Itoa(port)+"/hook")

	if out := s.Deliver(t.Context(), testDelivery()); !out.OK {
		t.Fatalf("Outcome = %+v, want OK over TLS", out)
	}
	if v := sawTLS.Load(); v < 0x0303 {
		t.Fatalf("TLS version %#x, want 1.2 or later", v)
	}
}

func TestDeliverRefusedByTheAddressPolicy(t *testing.T) {
	rcv := startReceiver(t, nil)
	port := strconv.Itoa(rcv.Listener.Addr().(*net.TCPAddr).Port)
	resolver := fixedResolver{
		"rebind.example":      netip.MustParseAddr("127.0.0.1"),
		"mapped.example":      netip.MustParseAddr("::ffff:127.0.0.1"),
		"hooks.example.local": netip.MustParseAddr("127.0.0.1"),
	}
	guarded := newTestType(t, Options{Resolver: resolver})

	tests := []struct{ name, url, want string }{
		{"loopback literal", "http://127.0.0.1:" + port, "destination refused: address 127.0.0.1 is refused: 127.0.0.0/8, loopback"},
		{"mapped loopback literal", "http://[::ffff:127.0.0.1]:" + port, "IPv4-mapped IPv6 embedding 127.0.0.0/8"},
		{"hostname resolving to loopback", "http://rebind.example:" + port, "destination refused: host rebind.example resolves to a refused address"},
		{"hostname resolving to a mapped loopback", "http://mapped.example:" + port, "127.0.0.0/8, loopback"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openSink(t, guarded, tc.url+"/hooks?token="+queryToken)
			out := s.Deliver(t.Context(), testDelivery())
			if out.OK || out.StatusCode != 0 || !strings.Contains(out.Error, tc.want) {
				t.Fatalf("Outcome = %+v, want a refusal mentioning %q", out, tc.want)
			}
			if strings.Contains(out.Error, queryToken) {
				t.Fatalf("Error %q repeats the URL's query", out.Error)
			}
			if err := s.Probe(t.Context(), sink.ProbeRequest{SubscriptionID: "s", TenantID: "acme"}); err == nil || !strings.Contains(err.Error(), "destination refused") {
				t.Fatalf("Probe = %v, want a refusal", err)
			}
		})
	}
	if n := len(rcv.Requests()); n != 0 || rcv.NewConns.Load() != 0 {
		t.Fatalf("the receiver saw %d requests and %d connections, want none", n, rcv.NewConns.Load())
	}

	// The same receiver by name, with private sinks allowed, is reached
	// by the address the name resolved to.
	open := newTestType(t, Options{AllowPrivate: true, Resolver: resolver})
	s := openSink(t, open, "http://hooks.example.local:"+port+"/hooks")
	if out := s.Deliver(t.Context(), testDelivery()); !out.OK {
		t.Fatalf("with private sinks allowed: %+v", out)
	}
	if got := rcv.Requests(); len(got) != 1 || got[0].Host != "hooks.example.local:"+port {
		t.Fatalf("with private sinks allowed the receiver got %+v, want one request for host hooks.example.local", got)
	}
}

func TestDeliverErrorsNameNoSecretOrQuery(t *testing.T) {
	rcv := startReceiver(t, nil)
	closedURL := rcv.hookURL()
	rcv.Close() // nothing listens there any more

	s := openSink(t, newTestType(t, Options{AllowPrivate: true}), closedURL, newSecret, oldSecret)
	out := s.Deliver(t.Context(), testDelivery())
	if out.OK || out.Error == "" {
		t.Fatalf("Outcome = %+v, want a connection failure", out)
	}
	for _, secret := range []string{newSecret, oldSecret, queryToken, "/hooks/hubctl"} {
		if strings.Contains(out.Error, secret) {
			t.Fatalf("Error %q contains %q", out.Error, secret)
		}
	}
	if len(out.Error) > maxErrorBytes {
		t.Fatalf("Error is %d bytes, want at most %d", len(out.Error), maxErrorBytes)
	}
}

func TestProbeSendsASignedVerificationMessage(t *testing.T) {
	rcv := startReceiver(t, nil)
	s := openSink(t, newTestType(t, Options{AllowPrivate: true}), rcv.hookURL(), newSecret, oldSecret)
	probe := sink.ProbeRequest{SubscriptionID: "0190f5c2-0000-7000-8000-000000000001", TenantID: "acme", Timeout: time.Second}

	if err := s.Probe(t.Context(), probe); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if err := s.Probe(t.Context(), probe); err != nil {
		t.Fatalf("second Probe: %v", err)
	}
	got := rcv.Requests()
	if len(got) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(got))
	}

	var challenges []string
	for _, req := range got {
		var msg map[string]string
		dec := json.NewDecoder(bytes.NewReader(req.Body))
		if err := dec.Decode(&msg); err != nil {
			t.Fatalf("probe body %q is not a JSON object of strings: %v", req.Body, err)
		}
		if len(msg) != 3 || msg["type"] != "hub.verification" || msg["subscription_id"] != probe.SubscriptionID || len(msg["challenge"]) < 16 {
			t.Fatalf("probe body %s, want type, subscription_id and a random challenge", req.Body)
		}
		challenges = append(challenges, msg["challenge"])

		h := req.Header
		if h.Get(whsign.HeaderEventType) != whsign.VerificationEventType || h.Get(whsign.HeaderTenantID) != "acme" ||
			h.Get(whsign.HeaderSchemaVersion) != probeSchemaVersion || h.Get("Content-Type") != "application/json" ||
			h.Get("User-Agent") != testAgent {
			t.Fatalf("probe headers %v", h)
		}
		for _, name := range []string{whsign.HeaderEventID, whsign.HeaderDeliveryID} {
			id, err := uuid.Parse(h.Get(name))
			if err != nil || id.Version() != 7 {
				t.Fatalf("%s = %q, want a UUIDv7", name, h.Get(name))
			}
		}
		lines := h.Values(whsign.HeaderSignature)
		want := []string{
			independentSignature(newSecret, "1767225600", req.Body),
			independentSignature(oldSecret, "1767225600", req.Body),
		}
		if !slices.Equal(lines, want) {
			t.Fatalf("probe signatures %q, want %q", lines, want)
		}
	}
	if challenges[0] == challenges[1] {
		t.Fatalf("two probes sent the same challenge %q", challenges[0])
	}
	if got[0].Header.Get(whsign.HeaderDeliveryID) == got[1].Header.Get(whsign.HeaderDeliveryID) {
		t.Fatal("two probes sent the same delivery id")
	}
}

func TestProbeFailures(t *testing.T) {
	tests := []struct {
		name    string
		respond http.HandlerFunc
		timeout time.Duration
		want    string
	}{
		{"refused with a reason", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "signature_mismatch", http.StatusUnauthorized)
		}, time.Second, "HTTP 401 Unauthorized: signature_mismatch"},
		{"not found, no body", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotFound)
		}, time.Second, "HTTP 404 Not Found"},
		{"control characters in the answer", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte("bad\r\n\x1b[31mrequest\x00 \xff"))
		}, time.Second, "HTTP 400 Bad Request: bad [31mrequest \uFFFD"},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "https://elsewhere.example/")
			w.WriteHeader(http.StatusMovedPermanently)
		}, time.Second, "HTTP 301 Moved Permanently: redirects are not followed"},
		{"too slow", func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, 100 * time.Millisecond, "no response within 100ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rcv := startReceiver(t, tc.respond)
			s := openSink(t, newTestType(t, Options{AllowPrivate: true}), rcv.hookURL())
			err := s.Probe(t.Context(), sink.ProbeRequest{SubscriptionID: "sub", TenantID: "acme", Timeout: tc.timeout})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Probe = %v, want %q", err, tc.want)
			}
		})
	}
}

// fixedResolver answers host lookups from a table, without DNS.
type fixedResolver map[string]netip.Addr

func (r fixedResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if ip, ok := r[host]; ok {
		return []netip.Addr{ip}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func certPool(srv *httptest.Server) *x509.CertPool {
	return srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
}
