package sink

import (
	"encoding/json"
	"errors"
	"testing"
)

type namedType struct{ name string }

func (n namedType) Name() string                        { return n.name }
func (namedType) Parse(json.RawMessage) (Config, error) { return Config{}, nil }
func (namedType) Open(Config, []string) (Sink, error)   { return nil, nil }

func TestRegistry(t *testing.T) {
	r, err := NewRegistry(namedType{"webhook"}, namedType{"pull"})
	if err != nil {
		t.Fatal(err)
	}
	if typ, err := r.Lookup("pull"); err != nil || typ.Name() != "pull" {
		t.Errorf("Lookup(pull) = %v, %v", typ, err)
	}
	if _, err := r.Lookup("ftp"); !errors.Is(err, ErrUnknownType) {
		t.Errorf("Lookup(ftp) = %v, want ErrUnknownType", err)
	}
	if got := r.Names(); len(got) != 2 || got[0] != "webhook" || got[1] != "pull" {
		t.Errorf("Names() = %v, want registration order", got)
	}
	if _, err := NewRegistry(namedType{"x"}, namedType{"x"}); err == nil {
		t.Error("a duplicate type must be refused")
	}
}

func TestDecodeObject(t *testing.T) {
	tests := []struct {
		raw, field string
	}{
		{`{"type":"webhook","url":"https://a"}`, ""},
		{`[]`, "sink"},
		{`null`, "sink"},
		{`"webhook"`, "sink"},
		{`{"url":"https://a"}`, "sink.type"},
		{`{"type":"sqs","url":"https://a"}`, "sink.type"},
		{`{"type":7}`, "sink.type"},
		{`{"type":"webhook","b":1,"a":2}`, "sink.a"},
	}
	for _, tt := range tests {
		_, err := DecodeObject(json.RawMessage(tt.raw), "webhook", "url")
		var fe *FieldError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%s: unexpected %v", tt.raw, err)
		case tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field):
			t.Errorf("%s: error %v, want a FieldError on %s", tt.raw, err, tt.field)
		}
	}
}
