package sink

import (
	"encoding/json"
	"errors"
	"testing"
)

// fieldType is a sink type whose credential is a field of its own: its
// object is {"type": "t", "url", "token"}.
type fieldType struct{}

func (fieldType) Name() string { return "t" }

func (fieldType) Parse(raw json.RawMessage) (Config, error) {
	fields, err := DecodeObject(raw, "t", "url", "token")
	if err != nil {
		return Config{}, err
	}
	var url, token string
	_ = json.Unmarshal(fields["url"], &url)
	_ = json.Unmarshal(fields["token"], &token)
	if url == "" {
		return Config{}, &FieldError{Field: "sink.url", Message: "required"}
	}
	public, _ := json.Marshal(map[string]string{"url": url})
	cfg := Config{Public: public, Destination: url}
	if token != "" {
		cfg.Credentials, _ = json.Marshal(map[string]string{"token": token})
	}
	return cfg, nil
}

func (fieldType) Open(Config, []string) (Sink, error) { return nil, errors.New("not for these tests") }

func TestObjectParse(t *testing.T) {
	reg, err := NewRegistry(fieldType{})
	if err != nil {
		t.Fatal(err)
	}
	current := &Config{Public: json.RawMessage(`{"url":"u"}`), Destination: "u", Credentials: json.RawMessage(`{"token":"old"}`)}
	for _, tc := range []struct {
		name       string
		raw        string
		current    *Config
		wantField  string // "" means accepted
		wantToken  string
		wantFields int
	}{
		{name: "no credentials", raw: `{"type":"t","url":"u"}`},
		{name: "credential split off", raw: `{"type":"t","url":"u","token":"new"}`, wantToken: `{"token":"new"}`, wantFields: 1},
		{name: "mask keeps the current credential", raw: `{"type":"t","url":"u","token":"****"}`, current: current, wantToken: `{"token":"old"}`, wantFields: 1},
		{name: "mask on create stands for nothing", raw: `{"type":"t","url":"u","token":"****"}`, wantField: "sink.token"},
		{name: "not an object", raw: `[1]`, wantField: "sink"},
		{name: "no type", raw: `{"url":"u"}`, wantField: "sink.type"},
		{name: "unknown type", raw: `{"type":"x"}`, wantField: "sink.type"},
		{name: "type's own field error", raw: `{"type":"t"}`, wantField: "sink.url"},
		{name: "NUL in a value", raw: `{"type":"t","url":"a\u0000b"}`, wantField: "sink"},
		{name: "NUL in a credential", raw: `{"type":"t","url":"u","token":"a\u0000"}`, wantField: "sink"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var parsed Parsed
			obj, err := reg.Object(json.RawMessage(tc.raw))
			if err == nil {
				parsed, err = obj.Parse(tc.current)
			}
			var bad *InvalidError
			switch {
			case tc.wantField == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantField != "" && !errors.As(err, &bad):
				t.Fatalf("got %v, want an InvalidError on %s", err, tc.wantField)
			case tc.wantField != "" && bad.Field != tc.wantField:
				t.Fatalf("field %q (%v), want %q", bad.Field, err, tc.wantField)
			case tc.wantField != "":
				return
			}
			if string(parsed.Config.Credentials) != tc.wantToken || len(parsed.CredentialFields) != tc.wantFields {
				t.Errorf("credentials %s fields %v, want %s and %d fields", parsed.Config.Credentials, parsed.CredentialFields, tc.wantToken, tc.wantFields)
			}
		})
	}
}

func TestShowMasksCredentialFields(t *testing.T) {
	reg, _ := NewRegistry(fieldType{})
	view, err := reg.Show("t", json.RawMessage(`{"url":"u"}`), []string{"token"})
	if err != nil {
		t.Fatal(err)
	}
	if view["type"] != "t" || view["url"] != "u" || view["token"] != Masked {
		t.Errorf("view %v", view)
	}
	if _, err := reg.Show("t", json.RawMessage(`[]`), nil); err == nil {
		t.Error("a stored configuration that is not an object was shown")
	}
}

func TestConfigDiffers(t *testing.T) {
	base := Config{Public: json.RawMessage(`{"a":1,"b":2}`), Destination: "d", Credentials: json.RawMessage(`{"k":"v"}`)}
	for _, tc := range []struct {
		name string
		next Config
		want bool
	}{
		{"same values, other layout", Config{Public: json.RawMessage(`{ "b": 2, "a": 1 }`), Destination: "d", Credentials: json.RawMessage(`{"k": "v"}`)}, false},
		{"other destination", Config{Public: base.Public, Destination: "e", Credentials: base.Credentials}, true},
		{"other public value", Config{Public: json.RawMessage(`{"a":1,"b":3}`), Destination: "d", Credentials: base.Credentials}, true},
		{"other credential", Config{Public: base.Public, Destination: "d", Credentials: json.RawMessage(`{"k":"w"}`)}, true},
		{"credentials dropped", Config{Public: base.Public, Destination: "d"}, true},
	} {
		if got := base.Differs(tc.next); got != tc.want {
			t.Errorf("%s: Differs = %v, want %v", tc.name, got, tc.want)
		}
	}
	if (Config{Public: base.Public}).Differs(Config{Public: base.Public}) {
		t.Error("two configurations without credentials differ")
	}
}

func TestContainsNUL(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"a":"b"}`:            false,
		`{"a":"b\u0000"}`:      true,
		`{"a\u0000":"b"}`:      true,
		`{"a":["x","\u0000"]}`: true,
		`{"a":{"b":[1,2]}}`:    false,
		`not json`:             false,
	} {
		if got := containsNUL(json.RawMessage(raw)); got != want {
			t.Errorf("containsNUL(%s) = %v, want %v", raw, got, want)
		}
	}
}
