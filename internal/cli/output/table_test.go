package output

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/hubctl/hubctl/internal/cli/iostreams"
)

func TestFit(t *testing.T) {
	id := Column{Name: "id", Priority: 9}
	name := Column{Name: "name", Priority: 8, Min: 10}
	kind := Column{Name: "type", Priority: 5}
	note := Column{Name: "note", Priority: 1, Min: 6}
	cols := []Column{id, name, kind, note}
	for _, tc := range []struct {
		name       string
		natural    []int
		width      int
		wantShown  []bool
		wantWidths []int
	}{
		{"no limit: as wide as the values", []int{36, 40, 8, 50}, 0, []bool{true, true, true, true}, []int{36, 40, 8, 50}},
		{"fits: untouched", []int{36, 10, 8, 10}, 80, []bool{true, true, true, true}, []int{36, 10, 8, 10}},
		{"cut before dropping: the room goes to the most important cut column", []int{36, 40, 8, 50}, 80,
			[]bool{true, true, true, true}, []int{36, 24, 8, 6}},
		{"dropped lowest priority first when cutting is not enough", []int{36, 40, 8, 50}, 60,
			[]bool{true, true, true, false}, []int{36, 12, 8, 50}},
		{"a column is cut no narrower than its minimum", []int{36, 40, 8, 50}, 50,
			[]bool{true, true, false, false}, []int{36, 12, 8, 50}},
		{"the last column standing stays whole", []int{36, 40, 8, 50}, 20,
			[]bool{true, false, false, false}, []int{36, 10, 8, 50}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shown, widths := Fit(cols, tc.natural, tc.width)
			if !slices.Equal(shown, tc.wantShown) {
				t.Errorf("shown = %v, want %v", shown, tc.wantShown)
			}
			for i := range shown {
				if shown[i] && widths[i] != tc.wantWidths[i] {
					t.Errorf("widths = %v, want %v (for shown columns)", widths, tc.wantWidths)
					break
				}
			}
		})
	}
}

func TestTableFitsTheTerminalAndKeepsFullWidthOffIt(t *testing.T) {
	long := strings.Repeat("very-long-subscription-name-", 4)
	table := func(tw *TableWriter) {
		tw.Columns(
			Column{Name: "id", Priority: 9},
			Column{Name: "name", Priority: 8, Min: 12},
			Column{Name: "where", Priority: 6, Min: 12, KeepEnd: true},
			Column{Name: "note", Priority: 1, Min: 8},
		)
		tw.Row("0190b6a2-7c1e-7d3a-9f00-000000000001", long, "ledger.transactions.v1/3/1234567", strings.Repeat("n", 60))
		tw.Row("0190b6a2-7c1e-7d3a-9f00-000000000002", "short", "t/0/1", "x")
	}
	ios, _, out, _ := iostreams.Test()
	ios.SetStdoutTTY(true)
	ios.DisableColor()
	ios.SetTerminalWidth(80)
	if err := New(ios, Table).Print(nil, table); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("line of %d cells: %q", w, l)
		}
	}
	if !strings.Contains(lines[1], "0190b6a2-7c1e-7d3a-9f00-000000000001") || !strings.Contains(lines[1], "…") {
		t.Errorf("ids stay whole, long names are cut: %q", lines[1])
	}
	if !strings.Contains(lines[1], "…1/3/1234567") {
		t.Errorf("a KeepEnd column keeps its end: %q", lines[1])
	}
	col := strings.Index(lines[0], "WHERE")
	if got := strings.Index(lines[2], "t/0/1"); got != col {
		t.Errorf("row 2's WHERE at %d, header at %d", got, col)
	}

	ios, _, out, _ = iostreams.Test() // a pipe: whole values, however wide
	if err := New(ios, Table).Print(nil, table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), long) || strings.Contains(out.String(), "…") {
		t.Errorf("off a terminal nothing is cut:\n%s", out)
	}
}

func TestStreamStaysAlignedAsValuesGrow(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	ios.SetStdoutTTY(true)
	ios.SetTerminalWidth(80)
	s := NewStream(ios,
		Column{Name: "seq", Priority: 9, Width: 16},
		Column{Name: "type", Priority: 8, Min: 12, Width: 28},
		Column{Name: "source", Priority: 1, Min: 8, Width: 24},
	)
	for _, seq := range []int64{7, 98_765, 1 << 40, 1<<53 - 1} {
		if err := s.Row(strconv.FormatInt(seq, 10), "transaction.posted.with.a.very.long.suffix", "midaz"); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	want := strings.Index(lines[0], "TYPE")
	for _, l := range lines[1:] {
		if got := strings.Index(l, "transaction"); got != want {
			t.Errorf("TYPE at %d, want %d: %q", got, want, l)
		}
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("line of %d cells: %q", w, l)
		}
	}
}
