package service

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// pageLimit applies the default and the bounds.
func pageLimit(limit int) (int, error) {
	switch {
	case limit == 0:
		return hubapi.DefaultPageLimit, nil
	case limit < 1 || limit > hubapi.MaxPageLimit:
		return 0, invalid("limit", "invalid limit %d: must be between 1 and %d", limit, hubapi.MaxPageLimit)
	}
	return limit, nil
}

// Cursors are opaque to clients: base64url of "<listing>:<position>". The
// listing name stops a cursor of one listing from being replayed against
// another, where its position would mean something else.
const (
	tenantsCursor    = "tenants"
	quarantineCursor = "quarantine"
)

// pageOf is the page rows make: each row as view shows it and, when more
// rows follow, the cursor to them, at position of the last row.
func pageOf[R, T any](rows []R, more bool, view func(R) T, listing string, position func(last R) string) hubapi.Page[T] {
	page := hubapi.Page[T]{Items: make([]T, len(rows))}
	for i, row := range rows {
		page.Items[i] = view(row)
	}
	if more && len(rows) > 0 {
		page.NextCursor = encodeCursor(listing, position(rows[len(rows)-1]))
	}
	return page
}

// positionAfter is the position a cursor of listing holds, parsed; nil for
// no cursor, the first page.
func positionAfter[P any](listing, cursor string, parse func(string) (*P, error)) (*P, error) {
	if cursor == "" {
		return nil, nil
	}
	position, err := decodeCursor(listing, cursor)
	if err != nil {
		return nil, err
	}
	return parse(position)
}

func encodeCursor(listing, position string) *string {
	c := base64.RawURLEncoding.EncodeToString([]byte(listing + ":" + position))
	return &c
}

// decodeCursor returns the position a cursor of listing holds.
func decodeCursor(listing, cursor string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", errBadCursor()
	}
	name, position, ok := strings.Cut(string(raw), ":")
	if !ok || name != listing || !utf8.ValidString(position) {
		return "", errBadCursor()
	}
	return position, nil
}

func errBadCursor() error {
	return invalid("cursor", "invalid cursor: pass the next_cursor of a previous page of the same listing, unchanged")
}

// A quarantine position is the last record's received_at in Unix
// microseconds (PostgreSQL's own precision, so it round-trips exactly) and
// its id.
func formatQuarantinePosition(at time.Time, id int64) string {
	return strconv.FormatInt(at.UnixMicro(), 10) + "." + strconv.FormatInt(id, 10)
}

// A forged cursor must not reach the database with a time PostgreSQL cannot
// hold; every real one lies well inside years 1–9999.
var (
	minCursorMicros = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	maxCursorMicros = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
)

func parseQuarantinePosition(position string) (time.Time, int64, error) {
	microsText, idText, ok := strings.Cut(position, ".")
	if !ok {
		return time.Time{}, 0, errBadCursor()
	}
	micros, err1 := strconv.ParseInt(microsText, 10, 64)
	id, err2 := strconv.ParseInt(idText, 10, 64)
	if err1 != nil || err2 != nil || micros < minCursorMicros || micros >= maxCursorMicros {
		return time.Time{}, 0, errBadCursor()
	}
	return time.UnixMicro(micros).UTC(), id, nil
}
