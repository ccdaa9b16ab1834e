package output

import (
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/iostreams"
)

type sample struct {
	Name   string   `json:"name"`
	Count  int      `json:"count"`
	Ratio  float64  `json:"ratio"`
	Tags   []string `json:"tags"`
	Absent *string  `json:"absent"`
}

func render(t *testing.T, format Format) string {
	t.Helper()
	ios, _, out, _ := iostreams.Test()
	v := sample{Name: "zeta", Count: 3, Ratio: 0.5, Tags: []string{"a", "b"}}
	err := New(ios, format).Print(v, func(tw *TableWriter) {
		tw.Header("name", "count")
		tw.Row(v.Name, "3")
		tw.Row("a-much-longer-name", "10")
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestPrintFormats(t *testing.T) {
	tests := []struct {
		format Format
		want   string
	}{
		{JSON, "{\n  \"name\": \"zeta\",\n  \"count\": 3,\n  \"ratio\": 0.5,\n  \"tags\": [\n    \"a\",\n    \"b\"\n  ],\n  \"absent\": null\n}\n"},
		{JSONL, `{"name":"zeta","count":3,"ratio":0.5,"tags":["a","b"],"absent":null}` + "\n"},
		// Field order follows the JSON form, not the alphabet.
		{YAML, "name: zeta\ncount: 3\nratio: 0.5\ntags:\n  - a\n  - b\nabsent: null\n"},
	}
	for _, tt := range tests {
		t.Run(string(tt.format), func(t *testing.T) {
			if got := render(t, tt.format); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestTableAligned(t *testing.T) {
	lines := strings.Split(strings.TrimRight(render(t, Table), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want header + 2 rows, got %q", lines)
	}
	if !strings.HasPrefix(lines[0], "NAME") {
		t.Errorf("header %q should be upper-cased", lines[0])
	}
	col := strings.Index(lines[0], "COUNT")
	for _, l := range lines[1:] {
		if strings.Index(l, "3") != col && strings.Index(l, "10") != col {
			t.Errorf("row %q not aligned under COUNT at column %d", l, col)
		}
	}
}

func TestResolve(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	if f, _ := Resolve("", ios); f != JSON {
		t.Errorf("pipe default = %q, want json", f)
	}
	ios.SetStdoutTTY(true)
	if f, _ := Resolve("", ios); f != Table {
		t.Errorf("terminal default = %q, want table", f)
	}
	if _, err := Resolve("xml", ios); err == nil || !strings.Contains(err.Error(), "table, json, yaml") {
		t.Errorf("bad format error = %v", err)
	}
	if f, err := Resolve("jsonl", ios, Table, JSON, JSONL); err != nil || f != JSONL {
		t.Errorf("jsonl when allowed = %q, %v", f, err)
	}
}

func TestStyleOnlyOnColorTerminal(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	if got := Style(ios, "failed"); got != "failed" {
		t.Errorf("no colour expected off a terminal, got %q", got)
	}
}
