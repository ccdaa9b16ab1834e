package subs

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
)

// TestReadOnlyFieldsAreWhatReadsShowAndUpdatesCannotSet pins the derived
// set. When hubapi's types gain a field this fails: check that dropping it
// from a read sent back is right, then list it here and in update's help.
func TestReadOnlyFieldsAreWhatReadsShowAndUpdatesCannotSet(t *testing.T) {
	want := []string{"id", "tenant_id", "verification_state", "verification_error", "disabled_reason",
		"failing_since", "last_failure_at", "previous_secret_expires_at", "created_at", "updated_at", "breaker", "rate"}
	if !slices.Equal(readOnlyFields, want) {
		t.Errorf("read-only fields %q, want %q", readOnlyFields, want)
	}
	long := strings.Join(strings.Fields(NewCmdUpdate(&cmdutil.Factory{}, nil).Long), " ")
	for _, field := range readOnlyFields {
		if !strings.Contains(long, " "+field+",") && !strings.Contains(long, " "+field+" ") && !strings.Contains(long, " "+field+".") {
			t.Errorf("update's help does not name the dropped field %s", field)
		}
	}
}

type embeddedByValue struct {
	Promoted string `json:"promoted"`
}

type embeddedByPointer struct {
	ViaPointer string
}

type embeddedTagged struct {
	Inner string
}

type jsonNamesFixture struct {
	embeddedByValue
	*embeddedByPointer
	Tagged     embeddedTagged `json:"tagged"`
	Renamed    string         `json:"renamed,omitempty"`
	Untagged   string
	OptionOnly string `json:",omitempty"`
	Skipped    string `json:"-"`
	unexported string
}

func TestJSONFieldNamesAreTheKeysEncodingJSONWrites(t *testing.T) {
	value := jsonNamesFixture{
		embeddedByValue:   embeddedByValue{Promoted: "x"},
		embeddedByPointer: &embeddedByPointer{ViaPointer: "x"},
		Renamed:           "x", OptionOnly: "x", Skipped: "x", unexported: "x",
	}
	raw, err := json.Marshal(value)
	if err != nil {
		t.Fatal(err)
	}
	var written map[string]any
	if err := json.Unmarshal(raw, &written); err != nil {
		t.Fatal(err)
	}
	got := jsonFieldNames(reflect.TypeFor[jsonNamesFixture]())
	slices.Sort(got)
	if want := slices.Sorted(maps.Keys(written)); !slices.Equal(got, want) {
		t.Errorf("names %q, encoding/json writes %q", got, want)
	}
}

func TestDecodeUpdate(t *testing.T) {
	const id = "0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b"
	const otherID = "0196a1c2-0000-7f00-8a4b-1c2d3e4f5a6b"
	read := `{
  "id": "` + id + `",
  "tenant_id": "acme",
  "name": "orders",
  "sink": {"type": "webhook", "url": "https://acme.example/hooks"},
  "event_types": ["transaction.*"],
  "schema_major": 1,
  "origin": null,
  "retry_schedule": null,
  "attempt_timeout": "10s",
  "enabled": false,
  "verification_state": "failed",
  "verification_error": "HTTP 503",
  "disabled_reason": "failing for 72h",
  "failing_since": "2025-01-01T00:00:00Z",
  "last_failure_at": "2025-01-04T00:00:00Z",
  "signing_secret": "****",
  "previous_secret_expires_at": null,
  "created_at": "2024-12-01T00:00:00Z",
  "updated_at": "2025-01-04T00:00:00Z"
}`
	cases := []struct {
		name     string
		document string
		want     string // the body sent, when the document is accepted
		wantErr  string // what a refusal (exit 2) mentions
	}{
		{name: "a read keeps every writable field and nothing else", document: read,
			want: `{"name":"orders","sink":{"type":"webhook","url":"https://acme.example/hooks"},"event_types":["transaction.*"],` +
				`"schema_major":1,"origin":null,"retry_schedule":null,"attempt_timeout":"10s","enabled":false,"signing_secret":"****"}`},
		{name: "the id in another case", document: `{"id": "` + strings.ToUpper(id) + `", "name": "n"}`, want: `{"name":"n"}`},
		{name: "a PATCH body without id", document: `{"name": "n"}`, want: `{"name":"n"}`},
		{name: "only read-only fields", document: `{"verification_state": "active", "created_at": "x"}`, want: `{}`},
		{name: "another subscription's read", document: strings.Replace(read, id, otherID, 1),
			wantErr: "is subscription " + otherID + ", not " + id},
		{name: "an id that is not a string", document: `{"id": 7, "name": "n"}`, wantErr: "id must be a string"},
		{name: "a null id", document: `{"id": null, "name": "n"}`, wantErr: "id must be a string"},
		{name: "an unknown field", document: `{"id": "` + id + `", "colour": "blue"}`, wantErr: `unknown field "colour"`},
		{name: "a writable field of the wrong type", document: `{"name": 7}`, wantErr: "name"},
		{name: "not an object", document: `["name"]`, wantErr: "invalid doc.json"},
		{name: "null", document: `null`, wantErr: "must be a JSON object"},
		{name: "cut short", document: "{\n  \"name\": \"n\",\n  \"event_types\": [\n", wantErr: "invalid doc.json: the JSON text ends in the middle of a value at line 3, column 19"},
		{name: "malformed", document: "{\n  \"name\" \"n\"\n}", wantErr: "invalid doc.json: invalid character '\"' after object key at line 2, column 10"},
		{name: "two objects", document: `{"name": "a"} {"name": "b"}`, wantErr: "unexpected data after the JSON object"},
	}
	for _, c := range cases {
		doc, err := decodeUpdate(strings.NewReader(c.document), "doc.json")
		if err == nil {
			err = doc.checkFor(id)
		}
		in := doc.Body
		if c.wantErr != "" {
			var exit *cmdutil.ExitError
			if !errors.As(err, &exit) || exit.Code != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: got %v, want a usage error mentioning %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%s: sends %s, want %s", c.name, got, c.want)
		}
	}
}
