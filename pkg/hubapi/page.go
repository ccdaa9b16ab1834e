package hubapi

// Page is one page of a listing: SPEC §6.1's `{"items": [...],
// "next_cursor": "<opaque>"|null}`. NextCursor is nil on the last page.
type Page[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"next_cursor"`
}
