package sqs

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	sqsapi "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hubctl/hubctl/internal/sink"
)

func testDelivery(payload []byte) sink.Delivery {
	return sink.Delivery{
		DeliveryID:    "0190b7a1-0000-7000-8000-000000000001",
		EventID:       "0190b7a0-0000-7000-8000-0000000000e1",
		EventKey:      "transaction.posted",
		TenantID:      "tenant-a",
		SchemaVersion: "1.2.0",
		Payload:       payload,
	}
}

// attributeOverhead is what the five identity attributes of testDelivery
// add to a message's size.
func attributeOverhead(d sink.Delivery) int {
	n := 0
	for name, value := range map[string]string{
		sink.AttrEventID: d.EventID, sink.AttrEventType: d.EventKey, sink.AttrTenantID: d.TenantID,
		sink.AttrDeliveryID: d.DeliveryID, sink.AttrSchemaVersion: d.SchemaVersion,
	} {
		n += len(name) + len(stringType) + len(value)
	}
	return n
}

func TestBuildMessage(t *testing.T) {
	const queue = "https://sqs.us-east-1.amazonaws.com/1/q"
	base := testDelivery([]byte(`{"amount":100}`))
	fits := bytes.Repeat([]byte("a"), MaxMessageBytes-attributeOverhead(base))
	binary := []byte{0x00, 0xff, 0xfe, 'x'}

	tests := []struct {
		name       string
		fifo       bool
		edit       func(*sink.Delivery)
		wantErr    string // a fragment; "" means a message
		wantBody   string
		wantAttrs  map[string]string
		wantAbsent []string
		wantGroup  string
		wantDedup  string
	}{
		{name: "text payload as is",
			wantBody: `{"amount":100}`,
			wantAttrs: map[string]string{
				sink.AttrEventID: base.EventID, sink.AttrEventType: base.EventKey, sink.AttrTenantID: base.TenantID,
				sink.AttrDeliveryID: base.DeliveryID, sink.AttrSchemaVersion: base.SchemaVersion,
			}},
		{name: "fifo gets group and dedup ids", fifo: true,
			wantBody: `{"amount":100}`, wantGroup: "tenant-a", wantDedup: base.EventID},
		{name: "binary payload is base64 with a marker",
			edit:      func(d *sink.Delivery) { d.Payload = binary },
			wantBody:  base64.StdEncoding.EncodeToString(binary),
			wantAttrs: map[string]string{AttrBodyEncoding: BodyEncodingBase64}},
		{name: "empty schema version is left out",
			edit:       func(d *sink.Delivery) { d.SchemaVersion = "" },
			wantBody:   `{"amount":100}`,
			wantAbsent: []string{sink.AttrSchemaVersion}},
		{name: "exactly 256 KiB with attributes",
			edit:     func(d *sink.Delivery) { d.Payload = fits },
			wantBody: string(fits)},
		{name: "one byte over 256 KiB",
			edit:    func(d *sink.Delivery) { d.Payload = append(bytes.Clone(fits), 'a') },
			wantErr: "message too large for SQS: 262145 bytes (event data plus attributes), the limit is 262144 bytes (256 KiB)"},
		{name: "binary payload over the limit once encoded",
			edit:    func(d *sink.Delivery) { d.Payload = bytes.Repeat([]byte{0xff}, 200<<10) },
			wantErr: "base64-encoded event data plus attributes"},
		{name: "empty payload",
			edit:    func(d *sink.Delivery) { d.Payload = nil },
			wantErr: "empty message body"},
		{name: "attribute with a control character",
			edit:    func(d *sink.Delivery) { d.EventKey = "a\x00b" },
			wantErr: "attribute lerian-event-type contains characters"},
		{name: "fifo without a tenant", fifo: true,
			edit:    func(d *sink.Delivery) { d.TenantID = "" },
			wantErr: "needs a tenant id (the message group id)"},
		{name: "fifo with a long event id", fifo: true,
			edit:    func(d *sink.Delivery) { d.EventID = strings.Repeat("e", 129) },
			wantErr: "event id (the deduplication id) is longer than the 128"},
		{name: "fifo with a space in the tenant", fifo: true,
			edit:    func(d *sink.Delivery) { d.TenantID = "tenant a" },
			wantErr: "tenant id (the message group id) has characters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := base
			if tc.edit != nil {
				tc.edit(&d)
			}
			input, err := buildMessage(queue, tc.fifo, d)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("buildMessage = %v, want an error mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("buildMessage: %v", err)
			}
			if *input.QueueUrl != queue {
				t.Errorf("QueueUrl = %q", *input.QueueUrl)
			}
			if *input.MessageBody != tc.wantBody {
				t.Errorf("MessageBody = %.60q…, want %.60q…", *input.MessageBody, tc.wantBody)
			}
			for name, want := range tc.wantAttrs {
				got := stringAttribute(input, name)
				if got != want {
					t.Errorf("attribute %s = %q, want %q", name, got, want)
				}
			}
			for _, name := range tc.wantAbsent {
				if _, present := input.MessageAttributes[name]; present {
					t.Errorf("attribute %s is present, want it left out", name)
				}
			}
			if _, marked := input.MessageAttributes[AttrBodyEncoding]; marked != (tc.wantAttrs[AttrBodyEncoding] != "") {
				t.Errorf("%s present = %v, want %v", AttrBodyEncoding, marked, !marked)
			}
			if got := deref(input.MessageGroupId); got != tc.wantGroup {
				t.Errorf("MessageGroupId = %q, want %q", got, tc.wantGroup)
			}
			if got := deref(input.MessageDeduplicationId); got != tc.wantDedup {
				t.Errorf("MessageDeduplicationId = %q, want %q", got, tc.wantDedup)
			}
		})
	}
}

func stringAttribute(input *sqsapi.SendMessageInput, name string) string {
	attr, ok := input.MessageAttributes[name]
	if !ok {
		return ""
	}
	if deref(attr.DataType) != "String" {
		return "<type " + deref(attr.DataType) + ">"
	}
	return deref(attr.StringValue)
}

func TestIsSQSText(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"", true},
		{`{"a":"b"}`, true},
		{"tab\tnewline\ncr\r", true},
		{"ünïcødé ✓ 😀", true},
		{"\uFFFD is a real replacement character", true},
		{"\x7f", true},
		{"\U0010FFFF", true},
		{"nul\x00", false},
		{"bell\x07", false},
		{"\x1f", false},
		{"\uFFFE", false},
		{"\uFFFF", false},
		{"\xff", false},
		{"\xed\xa0\x80", false}, // an encoded surrogate: invalid UTF-8
		{"truncated \xe2\x9c", false},
	}
	for _, tc := range tests {
		if got := isSQSText(tc.text); got != tc.want {
			t.Errorf("isSQSText(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func FuzzBuildMessage(f *testing.F) {
	f.Add([]byte(`{"a":1}`), "tenant", "event")
	f.Add([]byte{0, 0xff}, "", "")
	f.Fuzz(func(t *testing.T, payload []byte, tenant, eventID string) {
		d := testDelivery(payload)
		d.TenantID, d.EventID = tenant, eventID
		for _, fifo := range []bool{false, true} {
			input, err := buildMessage("https://sqs.us-east-1.amazonaws.com/1/q.fifo", fifo, d)
			if err != nil {
				continue
			}
			body := *input.MessageBody
			if !isSQSText(body) {
				t.Fatalf("body %q is not SQS text", body)
			}
			if _, encoded := input.MessageAttributes[AttrBodyEncoding]; encoded {
				decoded, err := base64.StdEncoding.DecodeString(body)
				if err != nil || !bytes.Equal(decoded, payload) {
					t.Fatalf("encoded body does not decode to the payload")
				}
			} else if body != string(payload) {
				t.Fatalf("body differs from the payload")
			}
		}
	})
}

func TestCacheKeyTellsRotatedSecretsApart(t *testing.T) {
	typ := NewType(Options{})
	open := func(secret string) *queueSink {
		t.Helper()
		s, err := typ.Open(sink.Config{
			Public:      []byte(`{"queue_url":"https://sqs.us-east-1.amazonaws.com/1/q","region":"us-east-1"}`),
			Credentials: []byte(`{"access_key_id":"k","secret_access_key":"` + secret + `"}`),
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s.(*queueSink)
	}
	first, second := open("one"), open("one")
	if first.client != second.client {
		t.Error("one credential set got two clients")
	}
	if open("one").client == open("two").client {
		t.Error("a rotated secret reused the old secret's client")
	}
}
