package output

import (
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/hubctl/hubctl/internal/cli/iostreams"
)

// Every table follows one rule to fit the terminal it is shown on: each
// column has a priority and, when its values may be cut, a minimum width.
// At the terminal's width the lowest-priority columns go first, until the
// rest fit with every cuttable column at its minimum; the room left is
// handed back to the cuttable columns, most important first, and values
// longer than their column end in "…". Off a terminal nothing is dropped or
// cut: full values are what scripts, -o json and `get` are for.

// Column describes one column of a table.
type Column struct {
	Name string
	// Priority orders the columns for dropping: the lowest goes first.
	// Columns of equal priority go from the right.
	Priority int
	// Min is the narrowest the column's values may be cut to; 0 means they
	// are never cut (an id a reader copies into the next command).
	Min int
	// KeepEnd cuts from the left: for values whose end tells them apart
	// (topic/partition/offset), not their shared start.
	KeepEnd bool
	// Width, when set, is the column's natural width instead of its widest
	// value: a stream's columns are laid out before its rows exist.
	Width int
}

// cuttable reports whether the column's values may be cut.
func (c Column) cuttable() bool { return c.Min > 0 }

// columnGap is the space between two columns.
const columnGap = 2

// Fit lays out columns whose widest values are natural on a line of width
// cells (0: no limit). It returns which columns are shown and how wide each
// shown one is; a column's width below its natural one means its values are
// cut.
func Fit(cols []Column, natural []int, width int) (shown []bool, widths []int) {
	shown = make([]bool, len(cols))
	widths = append([]int(nil), natural...)
	for i := range shown {
		shown[i] = true
	}
	if width <= 0 || total(natural, shown) <= width {
		return shown, widths
	}
	least := func(i int) int {
		if cols[i].cuttable() {
			return min(natural[i], max(cols[i].Min, ansi.StringWidth(cols[i].Name)))
		}
		return natural[i]
	}
	for i := range widths {
		widths[i] = least(i)
	}
	for total(widths, shown) > width && count(shown) > 1 {
		drop := -1
		for i := range cols {
			if shown[i] && (drop < 0 || cols[i].Priority <= cols[drop].Priority) {
				drop = i
			}
		}
		shown[drop] = false
	}
	// Hand the room left back to the cut columns, most important first.
	room := width - total(widths, shown)
	for room > 0 {
		next := -1
		for i := range cols {
			if shown[i] && widths[i] < natural[i] && (next < 0 || cols[i].Priority > cols[next].Priority) {
				next = i
			}
		}
		if next < 0 {
			break
		}
		grow := min(room, natural[next]-widths[next])
		widths[next] += grow
		room -= grow
	}
	return shown, widths
}

func total(widths []int, shown []bool) int {
	sum, n := 0, 0
	for i, w := range widths {
		if shown[i] {
			sum += w
			n++
		}
	}
	if n > 1 {
		sum += columnGap * (n - 1)
	}
	return sum
}

func count(shown []bool) int {
	n := 0
	for _, s := range shown {
		if s {
			n++
		}
	}
	return n
}

// Cut makes a line of text at most width cells wide, ending in "…" when
// it was longer, as a table cuts its values; width 0 or less leaves it
// whole. Colour sequences do not count.
func Cut(s string, width int) string {
	if width <= 0 {
		return s
	}
	return cut(s, width, false)
}

// cut makes s at most width cells wide, ending (or, with keepEnd,
// starting) in "…" when it was longer. Colour sequences do not count.
func cut(s string, width int, keepEnd bool) string {
	w := ansi.StringWidth(s)
	if w <= width {
		return s
	}
	if keepEnd {
		return ansi.TruncateLeft(s, w-width+1, "…")
	}
	return ansi.Truncate(s, width, "…")
}

// layout is a table's columns as Fit decided them.
type layout struct {
	cols   []Column
	shown  []bool
	widths []int
}

func newLayout(cols []Column, rows [][]string, width int) layout {
	natural := make([]int, len(cols))
	for i, c := range cols {
		natural[i] = max(ansi.StringWidth(c.Name), c.Width)
	}
	for _, r := range rows {
		for i := range min(len(r), len(cols)) {
			natural[i] = max(natural[i], ansi.StringWidth(r[i]))
		}
	}
	shown, widths := Fit(cols, natural, width)
	return layout{cols: cols, shown: shown, widths: widths}
}

// line renders one row: cells of shown columns, cut when a width limit
// applies, padded so the next column starts where its header does. With no
// limit (limit false) a value longer than its column pushes the rest of its
// row right rather than being cut.
func (l layout) line(cells []string, limit bool) string {
	var b strings.Builder
	last := -1
	for i := range l.cols {
		if l.shown[i] {
			last = i
		}
	}
	for i := range l.cols {
		if !l.shown[i] {
			continue
		}
		c := ""
		if i < len(cells) {
			c = cells[i]
		}
		if limit {
			c = cut(c, l.widths[i], l.cols[i].KeepEnd)
		}
		b.WriteString(c)
		if i == last {
			break
		}
		b.WriteString(strings.Repeat(" ", max(l.widths[i]-ansi.StringWidth(c), 0)+columnGap))
	}
	return b.String()
}

func writeTable(w io.Writer, cols []Column, rows [][]string, width int) error {
	var b strings.Builder
	for _, line := range Lines(cols, rows, width) {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Lines lays a table out by the one rule for a line width cells wide (0:
// no limit) and returns its lines, the header first. Cells may carry
// colour, which takes no room, and are written as given: a caller whose
// cells come from outside makes them safe first (TableWriter does). It is
// for a view that places the table itself, as hubctl top does.
func Lines(cols []Column, rows [][]string, width int) []string {
	l := newLayout(cols, rows, width)
	header := make([]string, len(cols))
	for i, c := range cols {
		header[i] = strings.ToUpper(c.Name)
	}
	lines := make([]string, 0, len(rows)+1)
	lines = append(lines, l.line(header, width > 0))
	for _, r := range rows {
		lines = append(lines, l.line(r, width > 0))
	}
	return lines
}

// Stream is a table whose rows are written as they come (pull --follow):
// its columns are laid out once, from their declared widths, so every row
// lines up under the header however its values grow. On a terminal a value
// longer than its column is cut; give columns that must never be cut a
// Width that holds every value they can take.
type Stream struct {
	w          io.Writer
	l          layout
	limit      bool
	headerDone bool
}

// NewStream lays out a streamed table for ios's terminal.
func NewStream(ios *iostreams.IOStreams, cols ...Column) *Stream {
	width := ios.TerminalWidth()
	return &Stream{w: ios.Out, l: newLayout(cols, nil, width), limit: width > 0}
}

// Row writes one row, after the header when it is the first.
func (s *Stream) Row(cells ...string) error {
	var b strings.Builder
	if !s.headerDone {
		s.headerDone = true
		header := make([]string, len(s.l.cols))
		for i, c := range s.l.cols {
			header[i] = strings.ToUpper(c.Name)
		}
		b.WriteString(s.l.line(header, s.limit))
		b.WriteByte('\n')
	}
	safe := make([]string, len(cells))
	for i, c := range cells {
		safe[i] = safeCell(c)
	}
	b.WriteString(s.l.line(safe, s.limit))
	b.WriteByte('\n')
	_, err := io.WriteString(s.w, b.String())
	return err
}
