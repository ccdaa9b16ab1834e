package output

import (
	"fmt"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// PrintPage prints one page of a listing: a header and a row per item on a
// table ("No <what>." when there are none), the page itself (items and next_cursor) encoded. When more items
// follow, a table says on stderr how to get them, "More <what> follow:
// <next> --cursor C", keeping stdout to the table alone; next is the
// command line that repeats this listing.
func PrintPage[T any](p *Printer, page hubapi.Page[T], header func(*TableWriter), row func(*TableWriter, T), what, next string) error {
	if p.format == Table && len(page.Items) == 0 && page.NextCursor == nil {
		// A header over nothing reads like output that got lost.
		_, err := fmt.Fprintf(p.ios.Out, "No %s.\n", what)
		return err
	}
	err := p.Print(page, func(t *TableWriter) {
		header(t)
		for _, item := range page.Items {
			row(t, item)
		}
	})
	if err != nil || p.format != Table || page.NextCursor == nil {
		return err
	}
	_, err = fmt.Fprintf(p.ios.ErrOut, "More %s follow: %s --cursor %s\n", what, next, *page.NextCursor)
	return err
}
