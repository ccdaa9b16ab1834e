package sqs

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/sinktest"
	"github.com/hubctl/hubctl/internal/testutil/goawstest"
)

// openSink parses and opens an SQS sink the way the service does.
func openSink(t *testing.T, typ *Type, queueURL, endpoint string) sink.Sink {
	t.Helper()
	raw, _ := json.Marshal(map[string]string{
		"type": "sqs", "queue_url": queueURL, "region": "us-east-1", "endpoint": endpoint,
		"access_key_id": testKeyID, "secret_access_key": testSecret,
	})
	cfg, err := typ.Parse(raw)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if cfg.Destination != queueURL {
		t.Fatalf("Destination = %q, want the queue URL %q", cfg.Destination, queueURL)
	}
	s, err := typ.Open(cfg, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// stringAttributes are the values of a received message's attributes; any
// attribute not of type String fails the test.
func stringAttributes(t *testing.T, m goawstest.Message) map[string]string {
	t.Helper()
	attrs := map[string]string{}
	for name, v := range m.Attributes {
		if v.DataType != stringType {
			t.Errorf("attribute %s has data type %q, want String", name, v.DataType)
		}
		attrs[name] = v.StringValue
	}
	return attrs
}

func wantAttributes(d sink.Delivery) map[string]string {
	return map[string]string{
		sink.AttrEventID: d.EventID, sink.AttrEventType: d.EventKey, sink.AttrTenantID: d.TenantID,
		sink.AttrDeliveryID: d.DeliveryID, sink.AttrSchemaVersion: d.SchemaVersion,
	}
}

func sameAttributes(got, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func TestDeliverToStandardQueue(t *testing.T) {
	g := goawstest.Start(t)
	queueURL := g.NewQueue(t, false)
	s := openSink(t, NewType(Options{AllowPrivate: true}), queueURL, g.Endpoint())

	text := testDelivery([]byte(`{"amount":100,"note":"ünïcødé"}`))
	binary := testDelivery([]byte{0x00, 0x01, 0xff, 0xfe})
	binary.DeliveryID = "0190b7a1-0000-7000-8000-000000000002"

	for _, d := range []sink.Delivery{text, binary} {
		out := s.Deliver(t.Context(), d)
		if !out.OK || out.StatusCode != http.StatusOK || out.Error != "" {
			t.Fatalf("Deliver = %+v, want OK with HTTP 200", out)
		}
		var result sendResult
		if err := json.Unmarshal(out.Response, &result); err != nil || result.MessageID == "" {
			t.Fatalf("Response %q does not carry the message id", out.Response)
		}
	}

	msgs := g.Receive(t, queueURL)
	if len(msgs) != 2 {
		t.Fatalf("received %d messages, want 2", len(msgs))
	}
	if msgs[0].Body != string(text.Payload) || !sameAttributes(stringAttributes(t, msgs[0]), wantAttributes(text)) {
		t.Errorf("text message = %+v, want body %s and attributes %v", msgs[0], text.Payload, wantAttributes(text))
	}
	wantBinary := wantAttributes(binary)
	wantBinary[AttrBodyEncoding] = BodyEncodingBase64
	if msgs[1].Body != base64.StdEncoding.EncodeToString(binary.Payload) || !sameAttributes(stringAttributes(t, msgs[1]), wantBinary) {
		t.Errorf("binary message = %+v, want base64 body and attributes %v", msgs[1], wantBinary)
	}
}

func TestDeliverToFIFOQueue(t *testing.T) {
	g := goawstest.Start(t)
	queueURL := g.NewQueue(t, true)
	s := openSink(t, NewType(Options{AllowPrivate: true}), queueURL, g.Endpoint())
	mark := g.Mark()

	first := testDelivery([]byte(`{"n":1}`))
	retry := first
	retry.DeliveryID = "0190b7a1-0000-7000-8000-0000000000ff" // a new attempt of one event
	for _, d := range []sink.Delivery{first, retry} {
		if out := s.Deliver(t.Context(), d); !out.OK {
			t.Fatalf("Deliver = %+v", out)
		}
	}

	// goaws does not return the group and deduplication ids on receive,
	// so they are read from the requests it was sent.
	sent := g.Requests(mark, "SendMessage")
	if len(sent) != 2 {
		t.Fatalf("%d SendMessage requests, want 2", len(sent))
	}
	for _, r := range sent {
		var req struct{ MessageGroupId, MessageDeduplicationId string }
		if err := json.Unmarshal(r.Body, &req); err != nil {
			t.Fatalf("SendMessage body %s: %v", r.Body, err)
		}
		if req.MessageGroupId != first.TenantID || req.MessageDeduplicationId != first.EventID {
			t.Errorf("group %q, dedup %q; want the tenant %q and the event id %q",
				req.MessageGroupId, req.MessageDeduplicationId, first.TenantID, first.EventID)
		}
	}
	// The retry carries the event's id as its deduplication id, so the
	// queue holds the event once.
	msgs := g.Receive(t, queueURL)
	if len(msgs) != 1 {
		t.Fatalf("received %d messages, want the event once", len(msgs))
	}
	if msgs[0].Body != `{"n":1}` || !sameAttributes(stringAttributes(t, msgs[0]), wantAttributes(first)) {
		t.Errorf("message = %+v, want the first attempt's body and attributes", msgs[0])
	}
}

func TestProbe(t *testing.T) {
	g := goawstest.Start(t)
	typ := NewType(Options{AllowPrivate: true})
	queueURL := g.NewQueue(t, false)

	if err := openSink(t, typ, queueURL, g.Endpoint()).Probe(t.Context(), sink.ProbeRequest{Timeout: 5 * time.Second}); err != nil {
		t.Fatalf("Probe of an existing queue = %v", err)
	}
	err := openSink(t, typ, g.MissingQueueURL(), g.Endpoint()).Probe(t.Context(), sink.ProbeRequest{Timeout: 5 * time.Second})
	// goaws answers a missing queue here with InvalidParameterValue where
	// AWS says QueueDoesNotExist; either way the probe fails with SQS's word.
	if err == nil || !strings.HasPrefix(err.Error(), "HTTP 400, SQS error ") {
		t.Fatalf("Probe of a missing queue = %v, want SQS's error with its HTTP status", err)
	}
	if strings.Contains(err.Error(), testKeyID) || strings.Contains(err.Error(), testSecret) {
		t.Fatalf("probe error %q quotes a credential", err)
	}
}

func TestOversizeMessageFailsWithoutARequest(t *testing.T) {
	g := goawstest.Start(t)
	queueURL := g.NewQueue(t, false)
	s := openSink(t, NewType(Options{AllowPrivate: true}), queueURL, g.Endpoint())
	mark := g.Mark()

	out := s.Deliver(t.Context(), testDelivery(bytes.Repeat([]byte("x"), MaxMessageBytes)))
	if out.OK || !out.NotSent || !strings.Contains(out.Error, "message too large for SQS") || !strings.Contains(out.Error, "256 KiB") {
		t.Fatalf("Deliver = %+v, want a failure before sending, naming the 256 KiB limit", out)
	}
	if n := g.Mark() - mark; n != 0 {
		t.Fatalf("goaws received %d requests for an oversize message", n)
	}
}

func TestAttemptTimeoutIsHonoured(t *testing.T) {
	hole := sinktest.NewBlackhole(t)
	endpoint := "http://" + hole.Addr()
	s := openSink(t, NewType(Options{AllowPrivate: true}), endpoint+"/100010001000/q", endpoint)

	start := time.Now()
	d := testDelivery([]byte(`{}`))
	d.Timeout = 300 * time.Millisecond
	out := s.Deliver(t.Context(), d)
	elapsed := time.Since(start)
	if out.OK || out.Error != "no response within 300ms" {
		t.Fatalf("Deliver = %+v, want a timeout failure", out)
	}
	if elapsed > 3*time.Second {
		t.Fatalf("Deliver took %s with a 300ms timeout", elapsed)
	}

	start = time.Now()
	err := s.Probe(t.Context(), sink.ProbeRequest{Timeout: 300 * time.Millisecond})
	if err == nil || err.Error() != "no response within 300ms" || time.Since(start) > 3*time.Second {
		t.Fatalf("Probe = %v after %s, want a timeout within the probe's 300ms", err, time.Since(start))
	}
	if hole.Accepted() == 0 {
		t.Fatal("the blackhole saw no connection: the timeout was not the one tested")
	}
}

// fixedResolver answers every lookup with one address.
type fixedResolver netip.Addr

func (r fixedResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.Addr(r)}, nil
}

func TestPrivateEndpointRefusedAtDialTime(t *testing.T) {
	hole := sinktest.NewBlackhole(t)
	port := hole.Addr()[strings.LastIndexByte(hole.Addr(), ':')+1:]
	named := "http://sqs.internal.test:" + port
	typ := NewType(Options{Resolver: fixedResolver(netip.MustParseAddr("127.0.0.1"))})
	s := openSink(t, typ, named+"/1/q", named)

	out := s.Deliver(t.Context(), testDelivery([]byte(`{}`)))
	if out.OK || !strings.HasPrefix(out.Error, "destination refused: ") || !strings.Contains(out.Error, "loopback") {
		t.Fatalf("Deliver = %+v, want the address policy's refusal", out)
	}
	if err := s.Probe(t.Context(), sink.ProbeRequest{}); err == nil || !strings.Contains(err.Error(), "destination refused") {
		t.Fatalf("Probe = %v, want the address policy's refusal", err)
	}
	if n := hole.Accepted(); n != 0 {
		t.Fatalf("%d connections reached a refused address", n)
	}
}

func TestErrorAnswersAreRecordedWithoutCredentials(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"__type":"com.amazonaws.sqs#InvalidClientTokenId","message":"key `+testKeyID+` with secret `+testSecret+` is not valid"}`)
	}))
	t.Cleanup(server.Close)
	s := openSink(t, NewType(Options{AllowPrivate: true}), server.URL+"/1/q", server.URL)

	out := s.Deliver(t.Context(), testDelivery([]byte(`{}`)))
	if out.OK || out.StatusCode != http.StatusForbidden || !strings.Contains(out.Error, "InvalidClientTokenId") {
		t.Fatalf("Deliver = %+v, want HTTP 403 naming the SQS error", out)
	}
	if strings.Contains(out.Error, testKeyID) || strings.Contains(out.Error, testSecret) {
		t.Fatalf("Outcome.Error %q quotes a credential", out.Error)
	}
	if !strings.Contains(out.Error, "****") {
		t.Fatalf("Outcome.Error %q lost the masked credential's place", out.Error)
	}
}
