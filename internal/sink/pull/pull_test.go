package pull

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/hubctl/hubctl/internal/sink"
)

func TestParse(t *testing.T) {
	tests := []struct {
		raw       string
		wantField string // "" means accepted
	}{
		{`{"type":"pull"}`, ""},
		{` { "type" : "pull" } `, ""},
		{`{"type":"pull","url":"https://hooks.example.com"}`, "sink.url"},
		{`{"type":"pull","cursor":0}`, "sink.cursor"},
		{`{"type":"webhook"}`, "sink.type"},
		{`{"type":"PULL"}`, "sink.type"},
		{`{}`, "sink.type"},
		{`{"type":1}`, "sink.type"},
		{`"pull"`, "sink"},
		{`null`, "sink"},
		{``, "sink"},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			cfg, err := NewType().Parse(json.RawMessage(tc.raw))
			if tc.wantField == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if string(cfg.Public) != `{}` || cfg.Credentials != nil || cfg.Destination != "pull" {
					t.Fatalf("Config = %+v, want Public {}, no credentials, destination pull", cfg)
				}
				return
			}
			fieldErr, ok := errors.AsType[*sink.FieldError](err)
			if !ok || fieldErr.Field != tc.wantField {
				t.Fatalf("Parse = %v, want a *sink.FieldError on %s", err, tc.wantField)
			}
		})
	}
}

func TestSinkProbesButNeverPushes(t *testing.T) {
	typ := NewType()
	if typ.Name() != "pull" {
		t.Fatalf("Name = %q", typ.Name())
	}
	cfg, err := typ.Parse(json.RawMessage(`{"type":"pull"}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := typ.Open(cfg, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := s.Probe(t.Context(), sink.ProbeRequest{SubscriptionID: "sub", TenantID: "acme"}); err != nil {
		t.Fatalf("Probe = %v, want success", err)
	}
	out := s.Deliver(t.Context(), sink.Delivery{EventID: "e", Payload: []byte(`{}`)})
	if out.OK || out.Error != errNotPushed || out.StatusCode != 0 {
		t.Fatalf("Deliver = %+v, want a failure explaining pull is read, not pushed", out)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
