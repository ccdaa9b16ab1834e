package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestDocumentIsValid loads the served document with kin-openapi and
// validates it, examples included: an example that does not match its
// schema is an error.
func TestDocumentIsValid(t *testing.T) {
	raw, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Errorf("openapi %q, want 3.1.x", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("validate: %v", err)
	}
}

// TestServedBytesAreStable: every call, and so every instance of a build,
// gives the same bytes and ETag, and the version is the build's.
func TestServedBytesAreStable(t *testing.T) {
	a, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := JSON()
	if !bytes.Equal(a, b) {
		t.Fatal("two calls answered different bytes")
	}
	again, err := ToJSON(Source(), "")
	if err != nil {
		t.Fatal(err)
	}
	var served, fromSource struct {
		Info struct{ Version string } `json:"info"`
	}
	if err := json.Unmarshal(a, &served); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again, &fromSource); err != nil {
		t.Fatal(err)
	}
	if served.Info.Version == "" || served.Info.Version == "source" || fromSource.Info.Version != "source" {
		t.Errorf("served version %q, source version %q", served.Info.Version, fromSource.Info.Version)
	}
	etag, _ := ETag()
	if len(etag) < 3 || etag[0] != '"' {
		t.Errorf("ETag %q is not a strong validator", etag)
	}
}

func TestToJSON(t *testing.T) {
	cases := []struct {
		name, in, version, want, err string
	}{
		{"keeps key order and types", "openapi: 3.1.0\ninfo: {title: t, version: v}\nz: 1\na: [true, null, 1.5, \"2\", <x>]\n", "",
			`{"openapi":"3.1.0","info":{"title":"t","version":"v"},"z":1,"a":[true,null,1.5,"2","<x>"]}`, ""},
		{"stamps the version as a string", "info: {version: source}\n", "1.0", `{"info":{"version":"1.0"}}`, ""},
		{"refuses anchors", "a: &x {b: 1}\nc: *x\n", "", "", "anchors"},
		{"refuses merge keys", "a: {b: 1}\nc:\n  <<: {b: 2}\n", "", "", "plain scalars"},
		{"refuses a key twice", "a: 1\na: 2\n", "", "", "twice"},
		{"refuses a document without info.version", "a: 1\n", "v", "", "info.version"},
		{"refuses a list at the top", "- 1\n", "", "", "not a YAML mapping"},
	}
	for _, c := range cases {
		got, err := ToJSON([]byte(c.in), c.version)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one with %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, got); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if compact.String() != c.want {
			t.Errorf("%s: got %s, want %s", c.name, compact.String(), c.want)
		}
	}
}
