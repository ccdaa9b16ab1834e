// Package output renders command results as a table for people or as JSON or
// YAML for scripts. Every command builds one value; the format decides how it
// is shown, so the three forms never disagree.
package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"gopkg.in/yaml.v3"

	"github.com/hubctl/hubctl/internal/cli/iostreams"
)

// Format is an output format accepted by -o.
type Format string

const (
	Table Format = "table"
	JSON  Format = "json"
	YAML  Format = "yaml"
	// JSONL is one compact JSON object per line, for streams (pull --follow).
	JSONL Format = "jsonl"
)

// Formats are those every listing command accepts.
var Formats = []Format{Table, JSON, YAML}

// Resolve picks the format: the flag when given, else a table for a person
// at a terminal and JSON for a pipe, so scripts get stable output by default.
func Resolve(flag string, ios *iostreams.IOStreams, allowed ...Format) (Format, error) {
	if len(allowed) == 0 {
		allowed = Formats
	}
	if flag == "" {
		if ios.IsStdoutTTY() {
			return Table, nil
		}
		return JSON, nil
	}
	for _, f := range allowed {
		if string(f) == flag {
			return f, nil
		}
	}
	names := make([]string, len(allowed))
	for i, f := range allowed {
		names[i] = string(f)
	}
	return "", fmt.Errorf("invalid output format %q: use one of %s", flag, strings.Join(names, ", "))
}

// Printer writes results to a command's stdout.
type Printer struct {
	ios    *iostreams.IOStreams
	format Format
}

// New returns a printer for an already resolved format.
func New(ios *iostreams.IOStreams, format Format) *Printer {
	return &Printer{ios: ios, format: format}
}

// Format is the printer's format.
func (p *Printer) Format() Format { return p.format }

// Print shows v: through table when the format is a table, else encoded.
func (p *Printer) Print(v any, table func(*TableWriter)) error {
	switch p.format {
	case Table:
		t := newTableWriter(p.ios)
		table(t)
		return t.render()
	case YAML:
		return writeYAML(p.ios.Out, v)
	case JSONL:
		return json.NewEncoder(p.ios.Out).Encode(v)
	}
	if p.ios.JSONFilter != nil {
		return p.ios.JSONFilter.Write(p.ios.Out, v)
	}
	switch p.format {
	default:
		enc := json.NewEncoder(p.ios.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
}

// TableWriter collects a table's columns and rows.
type TableWriter struct {
	ios  *iostreams.IOStreams
	cols []Column
	rows [][]string
}

func newTableWriter(ios *iostreams.IOStreams) *TableWriter { return &TableWriter{ios: ios} }

// Header names the columns of a small table: none is ever cut, and when
// the terminal is too narrow the rightmost go first.
func (t *TableWriter) Header(names ...string) {
	cols := make([]Column, len(names))
	for i, n := range names {
		cols[i] = Column{Name: n, Priority: len(names) - i}
	}
	t.cols = cols
}

// Columns sets the columns of a listing, each with its priority and the
// narrowest its values may be cut to.
func (t *TableWriter) Columns(cols ...Column) { t.cols = cols }

// Row appends one row; cells may already carry colour from Style.
func (t *TableWriter) Row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *TableWriter) render() error {
	// Every cell is made safe for a terminal here, whoever filled it: a
	// command that forgets to escape a name cannot let it spoof the table.
	rows := make([][]string, len(t.rows))
	for i, r := range t.rows {
		rows[i] = make([]string, len(r))
		for j, c := range r {
			rows[i][j] = safeCell(c)
		}
	}
	return writeTable(t.ios.Out, t.cols, rows, t.ios.TerminalWidth())
}

// Style colours state words when the output is a coloured terminal, so a
// failing subscription stands out in a long list.
func Style(ios *iostreams.IOStreams, state string) string {
	if !ios.ColorEnabled() {
		return state
	}
	var color lipgloss.Color
	switch state {
	case "active", "succeeded", "ok", "enabled", "true":
		color = "2"
	case "pending", "in_flight", "retrying":
		color = "3"
	case "failed", "dead", "inactive", "auto_disabled", "poison", "exhausted":
		color = "1"
	case "disabled", "canceled", "revoked", "false":
		color = "8"
	default:
		return state
	}
	return lipgloss.NewStyle().Foreground(color).Render(state)
}

// writeYAML converts through JSON so every value keeps the field names and
// order of its JSON form: one set of struct tags, two encodings.
func writeYAML(w io.Writer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	node, err := jsonToNode(dec)
	if err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(node); err != nil {
		return err
	}
	return enc.Close()
}

func jsonToNode(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			for dec.More() {
				keyTok, err := dec.Token()
				if err != nil {
					return nil, err
				}
				val, err := jsonToNode(dec)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: keyTok.(string)}, val)
			}
			_, err := dec.Token() // '}'
			return n, err
		case '[':
			n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			for dec.More() {
				val, err := jsonToNode(dec)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, val)
			}
			_, err := dec.Token() // ']'
			return n, err
		}
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t}, nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(t.String(), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String()}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(t)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}
