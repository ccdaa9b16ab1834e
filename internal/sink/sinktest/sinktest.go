// Package sinktest is the conformance suite every push sink runs from its
// own tests (SPEC §4): a sink type describes how to reach its destination
// in a [Harness], and [Run] checks what every sink owes dispatch:
//
//   - the event data arrives byte for byte, with the identity attributes
//     (event id, delivery id, tenant, event key, schema version, and
//     whatever else the sink carries) of the delivery;
//   - a success is OK without an error, a failure is not OK and has a
//     reason that names no credential;
//   - Deliver and Probe fail soon after the attempt timeout when the
//     destination hangs, not at some timeout of their own;
//   - Probe succeeds on a working destination and fails on an unusable one;
//   - Parse yields the same configuration whatever the order of the sink
//     object's fields, keeps credentials out of the shown configuration,
//     and gives a circuit-breaker key (Config.Destination) that names the
//     destination, never a credential.
//
// A sink's test adopts it in one function:
//
//	func TestConformance(t *testing.T) {
//		sinktest.Run(t, sinktest.Harness{Type: ..., Object: ..., Working: ..., ...})
//	}
//
// The pull sink does not run the suite: a pull subscription has no
// destination. Dispatch never delivers to it (its Deliver only reports
// that), there is nothing to receive, hang or refuse, its probe always
// succeeds (SPEC §2.2), and its destination key is a constant.
package sinktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/sink"
)

// Field names one identity attribute of a delivery, whatever a sink calls
// it on the wire (X-Lerian-Event-Id, lerian-event-id, "id", …).
type Field string

// The identity attributes. Every sink carries the first five (SPEC §3.5,
// §4); the others only where its protocol has a place for them, which its
// Harness declares in Carries.
const (
	EventID       Field = "event id"
	DeliveryID    Field = "delivery id"
	TenantID      Field = "tenant id"
	EventKey      Field = "event key"
	SchemaVersion Field = "schema version"

	Source          Field = "source"
	CloudEventType  Field = "type" // CloudEvents type, not the event key
	Time            Field = "time" // as FormatTime renders it
	Subject         Field = "subject"
	DataContentType Field = "data content type"
	TraceParent     Field = "traceparent"
	TraceState      Field = "tracestate"
)

// Required are the identity attributes every sink carries.
var Required = []Field{EventID, DeliveryID, TenantID, EventKey, SchemaVersion}

// deliveryValue reads each field from the delivery that was sent.
var deliveryValue = map[Field]func(sink.Delivery) string{
	EventID:         func(d sink.Delivery) string { return d.EventID },
	DeliveryID:      func(d sink.Delivery) string { return d.DeliveryID },
	TenantID:        func(d sink.Delivery) string { return d.TenantID },
	EventKey:        func(d sink.Delivery) string { return d.EventKey },
	SchemaVersion:   func(d sink.Delivery) string { return d.SchemaVersion },
	Source:          func(d sink.Delivery) string { return d.Source },
	CloudEventType:  func(d sink.Delivery) string { return d.Type },
	Time:            func(d sink.Delivery) string { return FormatTime(d.Time) },
	Subject:         func(d sink.Delivery) string { return d.Subject },
	DataContentType: func(d sink.Delivery) string { return d.DataContentType },
	TraceParent:     func(d sink.Delivery) string { return d.TraceParent },
	TraceState:      func(d sink.Delivery) string { return d.TraceState },
}

// FormatTime is how a Message reports Time: UTC, RFC 3339 with as many
// fractional digits as needed. The suite's events are stamped on a whole
// second, so a destination keeping seconds only (AMQP) reports it exactly.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Message is one delivery as the destination received it, normalised by
// the harness: the event data as the sink sent it, decoded from any
// transport encoding the sink applied (base64, a CloudEvents envelope),
// and the identity attributes it carried.
type Message struct {
	Body     []byte
	Identity map[Field]string
}

// Inbox returns what a working destination received since it was set up.
// The suite calls it once, after its deliveries.
type Inbox func(t testing.TB) []Message

// Harness is what the suite needs from a sink type. Credentials, Secrets
// and Carries may be empty; every other field is required. The sinks it
// opens are its to close (Open registers that), and should use the
// credentials of Object, so that the suite knows what their errors must
// not repeat.
type Harness struct {
	// Type is the sink type under test, configured as its tests need
	// (e.g. with private sinks allowed, to reach loopback).
	Type sink.Type

	// Object is a valid sink object for Parse, without "type" (the suite
	// adds it), naming one destination with credentials. Parse is only
	// checked, never dialled, so it may name any host.
	Object map[string]any
	// SameDestination names Object's destination with other credentials
	// (for a type without credentials, another spelling of the same
	// target, e.g. another webhook path and query): its key must be
	// Object's.
	SameDestination map[string]any
	// OtherDestination names another destination: its key must differ.
	OtherDestination map[string]any
	// Credentials are the values in Object that Parse must move into
	// Config.Credentials: keys, passwords (SPEC §2).
	Credentials []string
	// Secrets are other values no destination key, error or response may
	// repeat: a webhook URL's query token, a signing secret.
	Secrets []string

	// Carries lists the identity attributes beyond Required the sink's
	// messages carry; the suite requires them of every Message.
	Carries []Field

	// Working opens a sink on a destination that accepts deliveries, and
	// returns the inbox of what reached it.
	Working func(t *testing.T) (sink.Sink, Inbox)
	// Failing opens a sink on a reachable destination that refuses the
	// delivery with an error of its own: an HTTP 500, a missing queue or
	// exchange, a rejected entry.
	Failing func(t *testing.T) sink.Sink
	// Hanging opens a sink on a destination that accepts the connection
	// and never answers (see Blackhole).
	Hanging func(t *testing.T) sink.Sink
	// Unreachable opens a sink on a destination it cannot use at all:
	// nothing listening (see ClosedAddr), or a broker refusing the
	// credentials. Both Deliver and Probe must fail on it.
	Unreachable func(t *testing.T) sink.Sink
}

const (
	// attemptTimeout is the smallest attempt_timeout a subscription may
	// have (SPEC §2): the hanging destination costs the suite as little
	// time as possible.
	attemptTimeout = sink.MinAttemptTimeout
	// timeoutSlack is how far past attemptTimeout an attempt may end. The
	// bound stays under sink.DefaultAttemptTimeout, so a sink ignoring the
	// delivery's timeout for its default fails.
	timeoutSlack = 4 * time.Second
	// workingTimeout bounds attempts on working destinations: generous,
	// since they are not what is measured.
	workingTimeout = 10 * time.Second
	// eventTimeUnix stamps every delivery on a whole second.
	eventTimeUnix = 1767323045 // 2026-01-02T03:04:05Z
)

// NewDelivery is a delivery as the suite sends it: every attribute set,
// fresh event and delivery ids, and compact JSON data with non-ASCII text
// and characters an HTML-escaping encoder would alter. JSON is compact
// because a sink that embeds it in an envelope (EventBridge) re-encodes it
// compactly; its bytes are then unchanged.
func NewDelivery() sink.Delivery {
	return sink.Delivery{
		DeliveryID:      mustUUIDv7(),
		EventID:         mustUUIDv7(),
		EventKey:        TestEventKey,
		TenantID:        "tenant-conformance",
		Source:          "midaz/ledger",
		Type:            "studio.lerian.midaz.transaction.posted",
		Time:            time.Unix(eventTimeUnix, 0).UTC(),
		SchemaVersion:   "1.2.0",
		Subject:         "tx-42",
		DataContentType: "application/json",
		TraceParent:     "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		TraceState:      "rojo=00f067aa0ba902b7",
		Payload:         []byte(`{"amount":"100.00","memo":"café <a&b>","tags":["é","✓"]}`),
		Timeout:         workingTimeout,
	}
}

// TestEventKey is the event key of every delivery the suite sends; a
// destination that routes on it (a RabbitMQ binding) must accept it.
const TestEventKey = "transaction.posted"

// binaryDelivery carries data that is neither JSON nor valid UTF-8, which
// a sink must still deliver exactly (SQS and EventBridge by base64).
func binaryDelivery() sink.Delivery {
	d := NewDelivery()
	d.DataContentType = "application/octet-stream"
	d.Payload = []byte{0x00, 0xff, 0xfe, 'h', 'u', 'b', 0x80, '\n', 0x1b}
	return d
}

func mustUUIDv7() string {
	id, err := uuid.NewV7()
	if err != nil {
		panic(err) // only when the system's random source fails
	}
	return id.String()
}

// Run runs the suite as subtests of t.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if missing := h.missing(); len(missing) > 0 {
		t.Fatalf("sinktest: Harness lacks %s", strings.Join(missing, ", "))
	}
	t.Run("parse", func(t *testing.T) { runParse(t, h) })
	t.Run("deliver", func(t *testing.T) { runDeliver(t, h) })
	t.Run("failure", func(t *testing.T) { runFailure(t, h) })
	t.Run("attempt timeout", func(t *testing.T) { runTimeout(t, h) })
	t.Run("probe", func(t *testing.T) { runProbe(t, h) })
}

func (h Harness) missing() []string {
	var missing []string
	for name, absent := range map[string]bool{
		"Type": h.Type == nil, "Object": h.Object == nil, "SameDestination": h.SameDestination == nil,
		"OtherDestination": h.OtherDestination == nil, "Working": h.Working == nil, "Failing": h.Failing == nil,
		"Hanging": h.Hanging == nil, "Unreachable": h.Unreachable == nil,
	} {
		if absent {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	return missing
}

// secrets is everything no key, error or response may repeat.
func (h Harness) secrets() []string { return append(slices.Clone(h.Credentials), h.Secrets...) }

func runParse(t *testing.T, h Harness) {
	parse := func(t *testing.T, raw []byte) sink.Config {
		t.Helper()
		cfg, err := h.Type.Parse(raw)
		if err != nil {
			t.Fatalf("Parse(%s): %v", redact(string(raw), h.secrets()), err)
		}
		return cfg
	}
	object := withType(h.Object, h.Type.Name())

	t.Run("same object gives the same config", func(t *testing.T) {
		first, second := parse(t, objectJSON(t, object, false)), parse(t, objectJSON(t, object, false))
		if diff := configDiff(first, second); diff != "" {
			t.Fatalf("two Parses of one object differ: %s", redact(diff, h.secrets()))
		}
		if first.Destination == "" {
			t.Fatal("Destination is empty")
		}
	})
	t.Run("field order does not matter", func(t *testing.T) {
		forward, backward := parse(t, objectJSON(t, object, false)), parse(t, objectJSON(t, object, true))
		if diff := configDiff(forward, backward); diff != "" {
			t.Fatalf("Parse depends on the order of the fields: %s", redact(diff, h.secrets()))
		}
	})
	t.Run("credentials stay out of the public config and destination", func(t *testing.T) {
		cfg := parse(t, objectJSON(t, object, false))
		stored := credentialStrings(t, cfg.Credentials)
		for i, credential := range h.Credentials {
			if strings.Contains(string(cfg.Public), credential) {
				t.Errorf("credential %d is in the public config", i+1)
			}
			if !slices.ContainsFunc(stored, func(s string) bool { return strings.Contains(s, credential) }) {
				t.Errorf("credential %d is not in Config.Credentials", i+1)
			}
		}
		for i, secret := range h.secrets() {
			if strings.Contains(cfg.Destination, secret) {
				t.Errorf("destination key %q contains secret %d", redact(cfg.Destination, h.secrets()), i+1)
			}
		}
	})
	t.Run("other credentials keep the destination", func(t *testing.T) {
		want := parse(t, objectJSON(t, object, false)).Destination
		got := parse(t, objectJSON(t, withType(h.SameDestination, h.Type.Name()), false)).Destination
		if got != want {
			t.Fatalf("Destination = %q, want %q: credentials must not split a destination's breaker",
				redact(got, h.secrets()), redact(want, h.secrets()))
		}
	})
	t.Run("another destination has another key", func(t *testing.T) {
		one := parse(t, objectJSON(t, object, false)).Destination
		other := parse(t, objectJSON(t, withType(h.OtherDestination, h.Type.Name()), false)).Destination
		if one == other {
			t.Fatalf("two destinations share the key %q", redact(one, h.secrets()))
		}
	})
}

func runDeliver(t *testing.T, h Harness) {
	for _, tc := range []struct {
		name     string
		delivery func() sink.Delivery
	}{
		{"JSON data and identity arrive", NewDelivery},
		{"binary data arrives byte for byte", binaryDelivery},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, inbox := h.Working(t)
			d := tc.delivery()
			out := s.Deliver(t.Context(), d)
			if !out.OK || out.Error != "" {
				t.Fatalf("Deliver = %s, want OK without an error", describe(out, h.secrets()))
			}
			got := inbox(t)
			if len(got) != 1 {
				t.Fatalf("the destination received %d messages, want 1", len(got))
			}
			if !bytes.Equal(got[0].Body, d.Payload) {
				t.Errorf("body = %q, want the event data byte for byte: %q", got[0].Body, d.Payload)
			}
			checkIdentity(t, got[0].Identity, d, h.Carries)
		})
	}
}

// checkIdentity holds every attribute a message reports against the
// delivery, and requires Required and carried ones.
func checkIdentity(t *testing.T, got map[Field]string, d sink.Delivery, carries []Field) {
	t.Helper()
	for _, field := range slices.Concat(Required, carries) {
		if _, present := got[field]; !present {
			t.Errorf("identity attribute %q did not arrive", field)
		}
	}
	for _, field := range slices.Sorted(maps.Keys(got)) {
		value, known := deliveryValue[field]
		if !known {
			t.Errorf("the harness reports an unknown identity attribute %q", field)
			continue
		}
		if want := value(d); got[field] != want {
			t.Errorf("identity attribute %q = %q, want %q", field, got[field], want)
		}
	}
}

func runFailure(t *testing.T, h Harness) {
	for _, tc := range []struct {
		name string
		open func(*testing.T) sink.Sink
	}{
		{"destination answers an error", h.Failing},
		{"unreachable destination", h.Unreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.open(t)
			out := s.Deliver(t.Context(), NewDelivery())
			if out.OK {
				t.Fatalf("Deliver = %s, want a failure", describe(out, h.secrets()))
			}
			if strings.TrimSpace(out.Error) == "" {
				t.Fatalf("Deliver = %s, want a failure with a reason", describe(out, h.secrets()))
			}
			checkNoSecrets(t, "Outcome.Error", out.Error, h.secrets())
			checkNoSecrets(t, "Outcome.Response", string(out.Response), h.secrets())
		})
	}
}

func runTimeout(t *testing.T, h Harness) {
	bounded := func(t *testing.T, what string, attempt func(s sink.Sink) (failed bool, reason string)) {
		s := h.Hanging(t)
		start := time.Now()
		failed, reason := attempt(s)
		elapsed := time.Since(start)
		if !failed {
			t.Fatalf("%s on a destination that never answers succeeded", what)
		}
		if strings.TrimSpace(reason) == "" {
			t.Errorf("%s failed without a reason", what)
		}
		checkNoSecrets(t, what+" error", reason, h.secrets())
		if limit := attemptTimeout + timeoutSlack; elapsed > limit {
			t.Errorf("%s with a %v timeout took %v, more than %v", what, attemptTimeout, elapsed.Round(time.Millisecond), limit)
		}
		// A failure well before the timeout means the destination did not
		// hang, and the timeout was never tested.
		if elapsed < attemptTimeout/2 {
			t.Errorf("%s failed after %v, before its %v timeout (%s): the destination did not hang",
				what, elapsed.Round(time.Millisecond), attemptTimeout, redact(reason, h.secrets()))
		}
	}
	t.Run("deliver", func(t *testing.T) {
		bounded(t, "Deliver", func(s sink.Sink) (bool, string) {
			d := NewDelivery()
			d.Timeout = attemptTimeout
			out := s.Deliver(t.Context(), d)
			return !out.OK, out.Error
		})
	})
	t.Run("probe", func(t *testing.T) {
		bounded(t, "Probe", func(s sink.Sink) (bool, string) {
			err := s.Probe(t.Context(), probeRequest(attemptTimeout))
			if err == nil {
				return false, ""
			}
			return true, err.Error()
		})
	})
}

func runProbe(t *testing.T, h Harness) {
	t.Run("working destination", func(t *testing.T) {
		s, _ := h.Working(t)
		if err := s.Probe(t.Context(), probeRequest(workingTimeout)); err != nil {
			t.Fatalf("Probe = %s, want success", redact(err.Error(), h.secrets()))
		}
	})
	t.Run("unreachable destination", func(t *testing.T) {
		s := h.Unreachable(t)
		err := s.Probe(t.Context(), probeRequest(workingTimeout))
		if err == nil {
			t.Fatal("Probe succeeded, want a failure")
		}
		if strings.TrimSpace(err.Error()) == "" {
			t.Fatal("Probe failed without a reason")
		}
		checkNoSecrets(t, "Probe error", err.Error(), h.secrets())
	})
}

func probeRequest(timeout time.Duration) sink.ProbeRequest {
	return sink.ProbeRequest{SubscriptionID: mustUUIDv7(), TenantID: "tenant-conformance", Timeout: timeout, EventTypes: []string{TestEventKey}}
}

func checkNoSecrets(t *testing.T, what, text string, secrets []string) {
	t.Helper()
	for i, secret := range secrets {
		if secret != "" && strings.Contains(text, secret) {
			t.Errorf("%s repeats secret %d: %q", what, i+1, redact(text, secrets))
		}
	}
}

// redact masks secrets in text the suite itself prints.
func redact(text string, secrets []string) string {
	for _, secret := range secrets {
		if secret != "" {
			text = strings.ReplaceAll(text, secret, "<secret>")
		}
	}
	return text
}

func describe(out sink.Outcome, secrets []string) string {
	return redact(fmt.Sprintf("{OK:%v StatusCode:%d Error:%q Response:%q}", out.OK, out.StatusCode, out.Error, out.Response), secrets)
}

func withType(object map[string]any, typeName string) map[string]any {
	out := maps.Clone(object)
	if out == nil {
		out = map[string]any{}
	}
	out["type"] = typeName
	return out
}

// objectJSON renders a sink object with its fields in sorted order, or in
// reverse order: encoding/json would always sort them.
func objectJSON(t testing.TB, object map[string]any, reverse bool) []byte {
	t.Helper()
	keys := slices.Sorted(maps.Keys(object))
	if reverse {
		slices.Reverse(keys)
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, key := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		name, _ := json.Marshal(key)
		value, err := json.Marshal(object[key])
		if err != nil {
			t.Fatalf("sinktest: field %s: %v", key, err)
		}
		buf.Write(name)
		buf.WriteByte(':')
		buf.Write(value)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// configDiff names the parts in which two configurations differ.
func configDiff(a, b sink.Config) string {
	var diffs []string
	if !bytes.Equal(a.Public, b.Public) {
		diffs = append(diffs, fmt.Sprintf("Public %s vs %s", a.Public, b.Public))
	}
	if !bytes.Equal(a.Credentials, b.Credentials) {
		diffs = append(diffs, "Credentials differ")
	}
	if a.Destination != b.Destination {
		diffs = append(diffs, fmt.Sprintf("Destination %q vs %q", a.Destination, b.Destination))
	}
	return strings.Join(diffs, "; ")
}

// credentialStrings are the string values anywhere in stored credentials.
func credentialStrings(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("Config.Credentials is not JSON: %v", err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}
