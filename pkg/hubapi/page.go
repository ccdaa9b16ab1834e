package hubapi

// Page is one page of a listing, docs/api.md's `{"items": [...],
// "next_cursor": "<opaque>"|null}`. NextCursor is nil on the last page.
type Page[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"next_cursor"`
}
