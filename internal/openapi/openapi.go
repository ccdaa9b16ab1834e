// Package openapi holds hubctl's API contract, openapi.yaml: an OpenAPI 3.1
// document written by hand next to the handlers it describes (design-first:
// internal/api's tests hold every request and answer to it), and served as
// JSON at GET /openapi.json and by `hubctl api openapi`.
package openapi

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/hubctl/hubctl/internal/buildinfo"
)

//go:embed openapi.yaml
var source []byte

// Source is openapi.yaml as written, info.version "source".
func Source() []byte { return bytes.Clone(source) }

type document struct {
	json []byte
	etag string
	err  error
}

var served = sync.OnceValue(func() document {
	raw, err := ToJSON(source, buildinfo.Get().Version)
	if err != nil {
		return document{err: err}
	}
	sum := sha256.Sum256(raw)
	return document{json: raw, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
})

// JSON is the document this binary serves: openapi.yaml in JSON, keys in
// the order written, info.version set to the build's version. Two
// instances of one build answer the same bytes.
func JSON() ([]byte, error) {
	d := served()
	return bytes.Clone(d.json), d.err
}

// ETag is the strong validator of JSON's bytes.
func ETag() (string, error) {
	d := served()
	return d.etag, d.err
}

// ToJSON converts an OpenAPI document in YAML to indented JSON, keeping the
// order of its keys, so the served document reads like its source; version,
// when not empty, replaces info.version.
func ToJSON(yamlSource []byte, version string) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(yamlSource, &root); err != nil {
		return nil, fmt.Errorf("openapi: parse: %w", err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("openapi: the document is not a YAML mapping")
	}
	if version != "" {
		info := mappingValue(root.Content[0], "info")
		v := mappingValue(info, "version")
		if v == nil || v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("openapi: the document has no info.version")
		}
		v.Value, v.Tag, v.Style = version, "!!str", yaml.DoubleQuotedStyle
	}
	var compact bytes.Buffer
	if err := writeJSON(&compact, root.Content[0]); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// writeJSON writes n as compact JSON. Anchors, aliases and merge keys are
// refused: JSON has no counterpart, and the contract reads plainer without.
func writeJSON(buf *bytes.Buffer, n *yaml.Node) error {
	if n.Anchor != "" {
		return fmt.Errorf("openapi: line %d: YAML anchors are not allowed", n.Line)
	}
	switch n.Kind {
	case yaml.MappingNode:
		buf.WriteByte('{')
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
				return fmt.Errorf("openapi: line %d: keys must be plain scalars", k.Line)
			}
			if seen[k.Value] {
				return fmt.Errorf("openapi: line %d: key %q twice", k.Line, k.Value)
			}
			seen[k.Value] = true
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k.Value)
			buf.WriteByte(':')
			if err := writeJSON(buf, n.Content[i+1]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, item := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, item); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		return writeScalar(buf, n)
	default:
		return fmt.Errorf("openapi: line %d: aliases are not allowed", n.Line)
	}
	return nil
}

func writeScalar(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		buf.WriteString("null")
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return fmt.Errorf("openapi: line %d: %w", n.Line, err)
		}
		buf.WriteString(strconv.FormatBool(b))
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			return fmt.Errorf("openapi: line %d: %w", n.Line, err)
		}
		buf.WriteString(strconv.FormatInt(i, 10))
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return fmt.Errorf("openapi: line %d: %w", n.Line, err)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("openapi: line %d: %s has no JSON form", n.Line, n.Value)
		}
		raw, _ := json.Marshal(f)
		buf.Write(raw)
	case "!!str":
		writeString(buf, n.Value)
	default:
		return fmt.Errorf("openapi: line %d: unsupported YAML tag %s", n.Line, n.Tag)
	}
	return nil
}

// writeString writes s as a JSON string, leaving <, > and & as they are:
// the document is data, never embedded in HTML.
func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	buf.Truncate(buf.Len() - 1) // Encode's newline
}
