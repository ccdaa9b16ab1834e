package eventbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/testutil/eventbridgetest"
)

var eventTime = time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC)

func testDelivery() sink.Delivery {
	return sink.Delivery{
		DeliveryID:      "0195f1a2-0000-7000-8000-000000000002",
		EventID:         "0195f1a2-0000-7000-8000-000000000001",
		EventKey:        "transaction.posted",
		TenantID:        "acme",
		Source:          "midaz/ledger",
		Type:            "studio.lerian.ledger.transaction.posted",
		Time:            eventTime,
		SchemaVersion:   "1.2.0",
		Subject:         "tx-42",
		DataContentType: "application/json",
		TraceParent:     "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		Payload:         []byte(`{"amount": 100, "memo": "<a&b>"}`),
		Timeout:         5 * time.Second,
	}
}

// openAgainst opens a sink of the given configuration pointed at fake.
func openAgainst(t *testing.T, fake *eventbridgetest.Server, extra map[string]any) sink.Sink {
	t.Helper()
	fields := map[string]any{"endpoint": fake.URL()}
	for k, v := range extra {
		fields[k] = v
	}
	typ := NewType(Options{AllowPrivate: true})
	t.Cleanup(typ.CloseIdleConnections)
	cfg, err := typ.Parse(json.RawMessage(sinkObject(fields)))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	s, err := typ.Open(cfg, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// newFake starts a local EventBridge with the bus "orders", accepting
// requests signed with secret (testSecret when "").
func newFake(t *testing.T, secret string) *eventbridgetest.Server {
	if secret == "" {
		secret = testSecret
	}
	return eventbridgetest.New(t, eventbridgetest.Config{AccessKeyID: testKeyID, SecretAccessKey: secret, Region: "us-east-1", Buses: []string{"orders"}})
}

func assertNoCredentials(t *testing.T, what, text string) {
	t.Helper()
	if strings.Contains(text, testSecret) || strings.Contains(text, testKeyID) {
		t.Errorf("%s %q carries a credential", what, text)
	}
}

func TestDeliverPutsOneSignedEntry(t *testing.T) {
	tests := []struct {
		name           string
		detailType     any // nil: not configured
		wantDetailType string
	}{
		{name: "detail type defaults to the event key", wantDetailType: "transaction.posted"},
		{name: "configured detail type", detailType: "Ledger Event", wantDetailType: "Ledger Event"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t, "")
			s := openAgainst(t, fake, map[string]any{"detail_type": tc.detailType})
			d := testDelivery()

			out := s.Deliver(t.Context(), d)
			if !out.OK || out.StatusCode != http.StatusOK || out.Error != "" {
				t.Fatalf("Deliver = %+v, want a success", out)
			}
			if !bytes.Contains(out.Response, []byte(`"EventId":"11111111-2222-3333-4444-000000000000"`)) {
				t.Errorf("Response = %s, want the accepted entry's EventId", out.Response)
			}
			requests, received := fake.Requests(), fake.Entries()
			if requests != 1 || len(received) != 1 {
				t.Fatalf("fake saw %d requests, %d entries; want 1 and 1", requests, len(received))
			}
			entry := received[0]
			if entry.EventBusName != "orders" || entry.Source != d.Source || entry.DetailType != tc.wantDetailType {
				t.Errorf("entry bus/source/detail type = %q/%q/%q, want orders/%q/%q",
					entry.EventBusName, entry.Source, entry.DetailType, d.Source, tc.wantDetailType)
			}
			if entry.Time == nil || int64(*entry.Time) != eventTime.Unix() {
				t.Errorf("entry Time = %v, want the event time %d", entry.Time, eventTime.Unix())
			}

			var env map[string]any
			if err := json.Unmarshal([]byte(entry.Detail), &env); err != nil {
				t.Fatalf("Detail is not a JSON object: %v\n%s", err, entry.Detail)
			}
			want := map[string]any{
				"specversion":     "1.0",
				"id":              d.EventID,
				"source":          d.Source,
				"type":            d.Type,
				"time":            "2025-03-04T05:06:07.123456789Z",
				"subject":         d.Subject,
				"datacontenttype": "application/json",
				"tenantid":        d.TenantID,
				"schemaversion":   d.SchemaVersion,
				"eventkey":        d.EventKey,
				"deliveryid":      d.DeliveryID,
				"traceparent":     d.TraceParent,
				"data":            map[string]any{"amount": float64(100), "memo": "<a&b>"},
			}
			for key, value := range want {
				got, _ := json.Marshal(env[key])
				wantJSON, _ := json.Marshal(value)
				if !bytes.Equal(got, wantJSON) {
					t.Errorf("envelope %s = %s, want %s", key, got, wantJSON)
				}
			}
			if len(env) != len(want) {
				t.Errorf("envelope has %d members, want %d: %s", len(env), len(want), entry.Detail)
			}
		})
	}
}

func TestDeliverFailures(t *testing.T) {
	tests := []struct {
		name         string
		serverSecret string // "" means the configured one
		answer       func(*eventbridgetest.Server)
		delivery     func(*sink.Delivery)
		wantStatus   int
		wantError    string
		wantRequests int
	}{
		{
			name: "partial failure carries the entry's error code",
			answer: func(fake *eventbridgetest.Server) {
				fake.RejectEntries(func(eventbridgetest.Entry) (string, string) {
					return "InternalFailure", "Internal\nservice error"
				})
			},
			wantStatus:   http.StatusOK,
			wantError:    "entry rejected: InternalFailure: Internal service error",
			wantRequests: 1,
		},
		{
			name:         "wrong credentials",
			serverSecret: "a-different-secret-key",
			wantStatus:   http.StatusForbidden,
			wantError:    "HTTP 403 InvalidSignatureException: The request signature we calculated does not match",
			wantRequests: 1,
		},
		{
			name: "server error is not retried by the SDK",
			answer: func(fake *eventbridgetest.Server) {
				fake.FailPutEvents(http.StatusInternalServerError, "InternalException", "try again")
			},
			wantStatus:   http.StatusInternalServerError,
			wantError:    "HTTP 500 InternalException: try again",
			wantRequests: 1,
		},
		{
			name: "throttling is not retried by the SDK",
			answer: func(fake *eventbridgetest.Server) {
				fake.FailPutEvents(http.StatusBadRequest, "ThrottlingException", "Rate exceeded")
			},
			wantStatus:   http.StatusBadRequest,
			wantError:    "HTTP 400 ThrottlingException: Rate exceeded",
			wantRequests: 1,
		},
		{
			name: "an error echoing the credentials is scrubbed",
			answer: func(fake *eventbridgetest.Server) {
				fake.FailPutEvents(http.StatusBadRequest, "ValidationException", "bad key "+testKeyID+" / "+testSecret)
			},
			wantStatus:   http.StatusBadRequest,
			wantError:    "HTTP 400 ValidationException: bad key **** / ****",
			wantRequests: 1,
		},
		{
			name:         "oversized event is refused before sending",
			delivery:     func(d *sink.Delivery) { d.Payload = []byte(`"` + strings.Repeat("x", MaxEntryBytes) + `"`) },
			wantError:    "event too large for EventBridge",
			wantRequests: 0,
		},
		{
			name:         "event without source is refused before sending",
			delivery:     func(d *sink.Delivery) { d.Source = "" },
			wantError:    "event has no source",
			wantRequests: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t, tc.serverSecret)
			if tc.answer != nil {
				tc.answer(fake)
			}
			s := openAgainst(t, fake, nil)
			d := testDelivery()
			if tc.delivery != nil {
				tc.delivery(&d)
			}

			out := s.Deliver(t.Context(), d)
			if out.OK {
				t.Fatalf("Deliver = %+v, want a failure", out)
			}
			if out.StatusCode != tc.wantStatus || !strings.Contains(out.Error, tc.wantError) {
				t.Errorf("Deliver = status %d error %q, want status %d error containing %q", out.StatusCode, out.Error, tc.wantStatus, tc.wantError)
			}
			// Refused before sending says nothing about the bus: the
			// breaker must not hear of it.
			if out.NotSent != (tc.wantRequests == 0) {
				t.Errorf("Deliver NotSent = %v with %d requests expected", out.NotSent, tc.wantRequests)
			}
			assertNoCredentials(t, "Outcome.Error", out.Error)
			assertNoCredentials(t, "Outcome.Response", string(out.Response))
			if requests := fake.Requests(); requests != tc.wantRequests {
				t.Errorf("fake saw %d requests, want %d", requests, tc.wantRequests)
			}
		})
	}
}

func TestDeliverHonoursTimeout(t *testing.T) {
	fake := newFake(t, "")
	fake.Hang()
	s := openAgainst(t, fake, nil)
	d := testDelivery()
	d.Timeout = 300 * time.Millisecond

	start := time.Now()
	out := s.Deliver(t.Context(), d)
	elapsed := time.Since(start)
	if out.OK || out.Error != "no response within 300ms" {
		t.Fatalf("Deliver = %+v, want a timeout failure", out)
	}
	if elapsed > 3*time.Second {
		t.Errorf("Deliver took %s with a 300ms timeout", elapsed)
	}
	if requests := fake.Requests(); requests != 1 {
		t.Errorf("fake saw %d requests, want 1 (no SDK retry after a timeout)", requests)
	}
}

func TestProbe(t *testing.T) {
	tests := []struct {
		name         string
		bus          string
		serverSecret string
		timeout      time.Duration
		hang         bool
		wantError    string // "" means success
	}{
		{name: "bus exists", bus: "orders"},
		{name: "missing bus", bus: "nope", wantError: "DescribeEventBus: HTTP 400 ResourceNotFoundException: Event bus nope does not exist."},
		{name: "wrong credentials", bus: "orders", serverSecret: "another-secret", wantError: "HTTP 403 InvalidSignatureException"},
		{name: "timeout", bus: "orders", hang: true, timeout: 200 * time.Millisecond, wantError: "DescribeEventBus: no response within 200ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t, tc.serverSecret)
			if tc.hang {
				fake.Hang()
			}
			s := openAgainst(t, fake, map[string]any{"event_bus": tc.bus})
			err := s.Probe(t.Context(), sink.ProbeRequest{SubscriptionID: "sub", TenantID: "acme", Timeout: tc.timeout})
			if tc.wantError == "" {
				if err != nil {
					t.Fatalf("Probe = %v, want success", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantError) {
				t.Fatalf("Probe = %v, want an error containing %q", err, tc.wantError)
			}
			assertNoCredentials(t, "Probe error", err.Error())
		})
	}
}

// staticResolver answers every lookup with one address.
type staticResolver netip.Addr

func (r staticResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.Addr(r)}, nil
}

func TestEndpointOverrideObeysAddressPolicy(t *testing.T) {
	fake := newFake(t, "")
	_, port, err := net.SplitHostPort(strings.TrimPrefix(fake.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	// A hostname passes Parse; the dialer must still refuse where it leads.
	typ := NewType(Options{Resolver: staticResolver(netip.MustParseAddr("127.0.0.1"))})
	cfg, err := typ.Parse(json.RawMessage(sinkObject(map[string]any{"endpoint": "http://events.internal.example:" + port})))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	s, err := typ.Open(cfg, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	out := s.Deliver(t.Context(), testDelivery())
	if out.OK || !strings.Contains(out.Error, "destination refused") || !strings.Contains(out.Error, "loopback") {
		t.Fatalf("Deliver = %+v, want the loopback endpoint refused", out)
	}
	if err := s.Probe(t.Context(), sink.ProbeRequest{}); err == nil || !strings.Contains(err.Error(), "destination refused") {
		t.Fatalf("Probe = %v, want the loopback endpoint refused", err)
	}
	if requests := fake.Requests(); requests != 0 {
		t.Errorf("fake saw %d requests, want none", requests)
	}
}

func TestNewEnvelopeData(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		payload     string
		wantType    string
		wantData    string // the "data" member, compact; "" means absent
		wantBase64  string // the "data_base64" member; "" means absent
	}{
		{name: "default content type is JSON", payload: `{"a":1}`, wantType: "application/json", wantData: `{"a":1}`},
		{name: "JSON with parameters", contentType: "application/json; charset=utf-8", payload: `[1,2]`,
			wantType: "application/json; charset=utf-8", wantData: `[1,2]`},
		{name: "structured +json type", contentType: "application/cloudevents+json", payload: `"s"`,
			wantType: "application/cloudevents+json", wantData: `"s"`},
		{name: "JSON type but not JSON", contentType: "application/json", payload: `{oops`,
			wantType: "application/json", wantBase64: "e29vcHM="},
		{name: "binary", contentType: "application/octet-stream", payload: "\x00\x01\xff",
			wantType: "application/octet-stream", wantBase64: "AAH/"},
		{name: "text that happens to parse as JSON", contentType: "text/plain", payload: `42`,
			wantType: "text/plain", wantBase64: "NDI="},
		{name: "no data", contentType: "application/json", wantType: "application/json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := testDelivery()
			d.DataContentType = tc.contentType
			d.Payload = []byte(tc.payload)
			entry, err := BuildEntry(d, "")
			if err != nil {
				t.Fatalf("BuildEntry: %v", err)
			}
			var env map[string]json.RawMessage
			if err := json.Unmarshal([]byte(entry.Detail), &env); err != nil {
				t.Fatalf("Detail: %v", err)
			}
			if got := string(env["datacontenttype"]); got != `"`+tc.wantType+`"` {
				t.Errorf("datacontenttype = %s, want %q", got, tc.wantType)
			}
			if got := string(env["data"]); got != tc.wantData {
				t.Errorf("data = %s, want %s", got, tc.wantData)
			}
			wantBase64 := ""
			if tc.wantBase64 != "" {
				wantBase64 = `"` + tc.wantBase64 + `"`
			}
			if got := string(env["data_base64"]); got != wantBase64 {
				t.Errorf("data_base64 = %s, want %s", got, wantBase64)
			}
		})
	}
}

func TestBuildEntrySizeLimit(t *testing.T) {
	d := testDelivery()
	d.Payload = []byte(`""`)
	base, err := BuildEntry(d, "")
	if err != nil {
		t.Fatal(err)
	}
	// Fill the payload string so the entry lands exactly on the limit,
	// then one byte over.
	room := MaxEntryBytes - EntrySize(base)
	d.Payload = []byte(`"` + strings.Repeat("x", room) + `"`)
	entry, err := BuildEntry(d, "")
	if err != nil {
		t.Fatalf("entry of exactly %d bytes refused: %v", MaxEntryBytes, err)
	}
	if size := EntrySize(entry); size != MaxEntryBytes {
		t.Fatalf("EntrySize = %d, want %d", size, MaxEntryBytes)
	}
	d.Payload = []byte(`"` + strings.Repeat("x", room+1) + `"`)
	if _, err := BuildEntry(d, ""); err == nil || !strings.Contains(err.Error(), "the entry is 262145 bytes, the limit is 262144") {
		t.Fatalf("BuildEntry one byte over = %v, want the size failure", err)
	}
}

func TestJudgeAnswer(t *testing.T) {
	tests := []struct {
		name      string
		answer    putEventsAnswer
		wantOK    bool
		wantError string
	}{
		{"accepted", putEventsAnswer{Entries: []resultEntry{{EventID: "e"}}}, true, ""},
		{"failed entry", putEventsAnswer{FailedEntryCount: 1, Entries: []resultEntry{{ErrorCode: "AccessDeniedException", ErrorMessage: "no"}}},
			false, "entry rejected: AccessDeniedException: no"},
		{"error code without the count", putEventsAnswer{Entries: []resultEntry{{ErrorCode: "InternalFailure"}}},
			false, "entry rejected: InternalFailure"},
		{"count without an entry", putEventsAnswer{FailedEntryCount: 1}, false, "entry rejected: unknown error"},
		{"no entries", putEventsAnswer{}, false, "PutEvents answered 0 entries for 1 sent"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := judgeAnswer(tc.answer)
			if out.OK != tc.wantOK || out.Error != tc.wantError {
				t.Fatalf("judgeAnswer = %+v, want OK %v error %q", out, tc.wantOK, tc.wantError)
			}
		})
	}
}
