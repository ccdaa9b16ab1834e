package filter

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"strings"

	"github.com/google/cel-go/interpreter"
)

// Input is one event as filters read it. Build one per event and evaluate
// every subscription's filter on it: the payload is parsed at most once,
// the first time a filter reads data, however many filters read it. Not
// safe for concurrent use.
type Input struct {
	event  Event
	parsed bool
	data   any  // the payload parsed as JSON
	isJSON bool // data holds the payload
	vars   activation
}

// NewInput prepares e for filters; nothing is parsed yet.
func NewInput(e Event) *Input {
	in := &Input{event: e}
	in.vars = activation{in: in}
	return in
}

func (in *Input) activation(withData bool) interpreter.Activation {
	if withData && !in.parsed {
		in.parsed = true
		in.data, in.isJSON = parseData(in.event.DataContentType, in.event.Data)
	}
	return &in.vars
}

// activation resolves the filter's variables from the event. data resolves
// only when the payload is JSON: otherwise it is absent, and an expression
// that reads it fails (no match) rather than seeing some stand-in value.
type activation struct{ in *Input }

func (a *activation) ResolveName(name string) (any, bool) {
	e := &a.in.event
	switch name {
	case "id":
		return e.ID, true
	case "source":
		return e.Source, true
	case "type":
		return e.Key, true
	case "ce_type":
		return e.Type, true
	case "subject":
		return e.Subject, true
	case "time":
		return e.Time, true
	case "schema_version":
		return e.SchemaVersion, true
	case "tenant_id":
		return e.TenantID, true
	case "data":
		if a.in.parsed && a.in.isJSON {
			return a.in.data, true
		}
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }

// IsJSON reports whether a datacontenttype announces JSON: absent (the
// hub's default content type is application/json), application/json, or
// any type with the +json suffix.
func IsJSON(contentType string) bool {
	if contentType == "" {
		return true
	}
	media, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return media == "application/json" || strings.HasSuffix(media, "+json")
}

// parseData parses a JSON payload into the values CEL adapts natively:
// maps, lists, strings, bools, nil, and numbers as int64 when they are
// integers that fit (ids and amounts keep every digit), float64 otherwise.
func parseData(contentType string, payload []byte) (any, bool) {
	if !IsJSON(contentType) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false // trailing data: not one JSON value
	}
	return numbers(v), true
}

func numbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = numbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = numbers(e)
		}
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		if f, err := t.Float64(); err == nil {
			return f
		}
		return t.String()
	}
	return v
}
