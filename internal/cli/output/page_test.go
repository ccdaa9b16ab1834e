package output

import (
	"testing"

	"github.com/hubctl/hubctl/internal/cli/iostreams"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestPrintPageHintsNextPageOnlyOnTable(t *testing.T) {
	cursor := "c2"
	more := hubapi.Page[string]{Items: []string{"a", "b"}, NextCursor: &cursor}
	last := hubapi.Page[string]{Items: []string{"a"}}
	tests := []struct {
		name     string
		format   Format
		page     hubapi.Page[string]
		wantOut  string
		wantHint string
	}{
		{"table with more", Table, more, "NAME\na\nb\n", "More letters follow: hubctl letters --limit 2 --cursor c2\n"},
		{"table on the last page", Table, last, "NAME\na\n", ""},
		{"empty table says so", Table, hubapi.Page[string]{Items: []string{}}, "No letters.\n", ""},
		{"empty json stays a page", JSON, hubapi.Page[string]{Items: []string{}}, "{\n  \"items\": [],\n  \"next_cursor\": null\n}\n", ""},
		{"json carries the cursor instead", JSON, more, "{\n  \"items\": [\n    \"a\",\n    \"b\"\n  ],\n  \"next_cursor\": \"c2\"\n}\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, out, errOut := iostreams.Test()
			err := PrintPage(New(ios, tt.format), tt.page,
				func(tw *TableWriter) { tw.Header("name") },
				func(tw *TableWriter, s string) { tw.Row(s) },
				"letters", "hubctl letters --limit 2")
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.wantOut {
				t.Errorf("stdout = %q, want %q", out.String(), tt.wantOut)
			}
			if errOut.String() != tt.wantHint {
				t.Errorf("stderr = %q, want %q", errOut.String(), tt.wantHint)
			}
		})
	}
}
