package events

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/event"
)

func validInput() produceInput {
	return produceInput{
		Tenant:        "acme",
		Type:          "transaction.posted",
		Source:        "midaz",
		SchemaVersion: "1.0.0",
		ContentType:   "application/json",
		Data:          []byte(`{"amount":100}`),
	}
}

func TestNewTemplateBuildsWhatIngestAccepts(t *testing.T) {
	in := validInput()
	in.Subject = "account/42"
	tmpl, err := newTemplate(in, "studio.lerian.")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 6, 1, 12, 0, 0, 123456789, time.FixedZone("BRT", -3*3600))
	id := newEventID()
	rec := tmpl.record(id, at)

	if rec.Topic != "lerian.streaming.midaz_transaction.posted" || string(rec.Key) != "acme" || string(rec.Value) != `{"amount":100}` {
		t.Errorf("record topic %q key %q value %q", rec.Topic, rec.Key, rec.Value)
	}
	headers := make([]event.Header, len(rec.Headers))
	for i, h := range rec.Headers {
		headers[i] = event.Header(h)
	}
	ev, verdict, ok := event.Parse(headers, rec.Value, event.Options{})
	if !ok {
		t.Fatalf("ingest rejects the record: %s", verdict)
	}
	want := event.Event{
		ID: id, Source: "midaz", Type: "studio.lerian.midaz.transaction.posted", SpecVersion: "1.0",
		TimeText: "2025-06-01T15:00:00.123456789Z", SchemaVersion: "1.0.0", SchemaMajor: 1,
		ResourceType: "transaction", EventType: "posted", Key: "transaction.posted", TenantID: "acme",
		Subject: "account/42", DataContentType: "application/json",
	}
	got := ev
	got.Time, got.Data, got.OtherHeaders = time.Time{}, nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parsed event\n got  %+v\n want %+v", got, want)
	}
	if !ev.Time.Equal(at) {
		t.Errorf("time %v, want %v", ev.Time, at)
	}
	if len(ev.OtherHeaders) != 0 {
		t.Errorf("unexpected extra headers %v", ev.OtherHeaders)
	}
}

func TestNewTemplateUsesTheConfiguredPrefix(t *testing.T) {
	for _, c := range []struct{ prefix, wantType string }{
		{"studio.lerian.", "studio.lerian.midaz.transaction.posted"},
		{"com.example.", "com.example.midaz.transaction.posted"},
		{"", "studio.lerian.midaz.transaction.posted"}, // empty reads as the default, as in ingest
	} {
		tmpl, err := newTemplate(validInput(), c.prefix)
		if err != nil {
			t.Errorf("prefix %q: %v", c.prefix, err)
			continue
		}
		if tmpl.ceType != c.wantType {
			t.Errorf("prefix %q: type %q, want %q", c.prefix, tmpl.ceType, c.wantType)
		}
	}
}

func TestNewTemplateRejects(t *testing.T) {
	cases := []struct {
		name   string
		change func(*produceInput)
		want   string // in the message
	}{
		{"bad tenant", func(in *produceInput) { in.Tenant = "no spaces" }, "--tenant"},
		{"empty tenant", func(in *produceInput) { in.Tenant = "" }, "--tenant"},
		{"type without event", func(in *produceInput) { in.Type = "transaction" }, "--type"},
		{"type with three segments", func(in *produceInput) { in.Type = "midaz.transaction.posted" }, "--type"},
		{"type in capitals", func(in *produceInput) { in.Type = "Transaction.Posted" }, "--type"},
		{"type with empty segment", func(in *produceInput) { in.Type = "transaction." }, "--type"},
		{"type given as an argument", func(in *produceInput) { in.Type, in.TypeGivenAs = "Transaction", "event key" }, `invalid event key "Transaction"`},
		{"source with a slash", func(in *produceInput) { in.Source = "lerian/midaz" }, "--source"},
		{"empty source", func(in *produceInput) { in.Source = "" }, "--source"},
		{"schema version with letters", func(in *produceInput) { in.SchemaVersion = "v1" }, "--schema-version"},
		{"schema version with four parts", func(in *produceInput) { in.SchemaVersion = "1.0.0.0" }, "--schema-version"},
		{"topic with a slash", func(in *produceInput) { in.Topic = "a/b" }, "--topic"},
		{"topic too long", func(in *produceInput) { in.Topic = strings.Repeat("a", 250) }, "--topic"},
		{"topic dot", func(in *produceInput) { in.Topic = "." }, "--topic"},
		{"default topic too long", func(in *produceInput) { in.Source = strings.Repeat("s", 240) }, "pass a --topic"},
		{"bad content type", func(in *produceInput) { in.ContentType = "not a type" }, "--content-type"},
		{"invalid JSON", func(in *produceInput) { in.Data = []byte(`{"a":`) }, "not valid JSON (the JSON text ends in the middle of a value at line 1, column 6)"},
		{"invalid JSON, +json type", func(in *produceInput) {
			in.ContentType = "application/cloudevents+json; charset=utf-8"
			in.Data = []byte("nope")
		}, "not valid JSON (invalid character 'o' in literal null (expecting 'u') at line 1, column 2)"},
		{"subject with a control character", func(in *produceInput) { in.Subject = "a\x1bb" }, "invalid_subject"},
		{"schema major past 32 bits", func(in *produceInput) { in.SchemaVersion = "99999999999" }, "invalid_schemaversion"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := validInput()
			c.change(&in)
			_, err := newTemplate(in, "studio.lerian.")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one mentioning %q", err, c.want)
			}
		})
	}
}

func TestNewTemplateAcceptsNonJSONData(t *testing.T) {
	in := validInput()
	in.ContentType, in.Data = "text/plain", []byte("not json")
	if _, err := newTemplate(in, "studio.lerian."); err != nil {
		t.Errorf("text data: %v", err)
	}
	in.Data = make([]byte, event.DefaultMaxEventBytes+1) // size is the hub's setting to judge
	if _, err := newTemplate(in, "studio.lerian."); err != nil {
		t.Errorf("large data: %v", err)
	}
}

func TestDefaultTopic(t *testing.T) {
	cases := []struct{ source, resource, event, want string }{
		{"midaz", "transaction", "posted", "lerian.streaming.midaz_transaction.posted"},
		{"midaz", "balance", "config-changed", "lerian.streaming.midaz_balance.config_changed"},
		{"plugin-fees", "fee-rule", "created", "lerian.streaming.plugin_fees_fee_rule.created"},
	}
	for _, c := range cases {
		if got := defaultTopic(c.source, c.resource, c.event); got != c.want {
			t.Errorf("defaultTopic(%q, %q, %q) = %q, want %q", c.source, c.resource, c.event, got, c.want)
		}
	}
}

func TestIsJSONContentType(t *testing.T) {
	cases := map[string]bool{
		"application/json":                true,
		"application/json; charset=utf-8": true,
		"Application/JSON":                true,
		"application/cloudevents+json":    true,
		"text/plain":                      false,
		"application/octet-stream":        false,
		"application/jsonl":               false,
		"not a type":                      false,
		"":                                false,
	}
	for ct, want := range cases {
		if got := isJSONContentType(ct); got != want {
			t.Errorf("isJSONContentType(%q) = %v, want %v", ct, got, want)
		}
	}
}

func TestNewEventIDIsAFreshCanonicalUUIDv7(t *testing.T) {
	tmpl, err := newTemplate(validInput(), "")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	seen := map[string]bool{}
	for range 10000 {
		id := newEventID()
		if seen[id] {
			t.Fatalf("id %s generated twice", id)
		}
		seen[id] = true
	}
	for id := range seen {
		headers := make([]event.Header, 0, 12)
		for _, h := range tmpl.record(id, now).Headers {
			headers = append(headers, event.Header(h))
		}
		if _, verdict, ok := event.Parse(headers, tmpl.data, event.Options{}); !ok {
			t.Fatalf("id %s: %s", id, verdict)
		}
	}
}
