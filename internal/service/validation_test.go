package service

import (
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestPageLimit(t *testing.T) {
	cases := []struct {
		in, want int
		valid    bool
	}{
		{0, hubapi.DefaultPageLimit, true},
		{1, 1, true},
		{hubapi.MaxPageLimit, hubapi.MaxPageLimit, true},
		{hubapi.MaxPageLimit + 1, 0, false},
		{-1, 0, false},
	}
	for _, c := range cases {
		got, err := pageLimit(c.in)
		if (err == nil) != c.valid || got != c.want {
			t.Errorf("pageLimit(%d) = %d, %v; want %d, valid = %v", c.in, got, err, c.want, c.valid)
		}
		var v *hubapi.ValidationError
		if err != nil && (!errors.As(err, &v) || v.Field != "limit") {
			t.Errorf("pageLimit(%d) error %#v is not a hubapi.ValidationError on limit", c.in, err)
		}
	}
}

func TestCursorsRoundTripAndRejectForgeries(t *testing.T) {
	for _, position := range []string{"", "acme", "a:b:c", "héllo"} {
		got, err := decodeCursor(tenantsCursor, *encodeCursor(tenantsCursor, position))
		if err != nil || got != position {
			t.Errorf("round trip of %q: %q, %v", position, got, err)
		}
	}

	at := time.Date(2025, 1, 2, 3, 4, 5, 678901000, time.UTC)
	gotAt, gotID, err := parseQuarantinePosition(formatQuarantinePosition(at, 42))
	if err != nil || !gotAt.Equal(at) || gotID != 42 {
		t.Errorf("quarantine position round trip: %v, %d, %v", gotAt, gotID, err)
	}

	quarantine := *encodeCursor(quarantineCursor, formatQuarantinePosition(at, 42))
	forged := []struct{ name, listing, cursor string }{
		{"not base64", tenantsCursor, "!!!"},
		{"padded base64", tenantsCursor, "dGVuYW50czphY21l=="},
		{"no listing", tenantsCursor, rawCursor("acme")},
		{"another listing's cursor", tenantsCursor, quarantine},
		{"invalid UTF-8", tenantsCursor, rawCursor("tenants:\xff")},
	}
	for _, c := range forged {
		if _, err := decodeCursor(c.listing, c.cursor); !isCursorError(err) {
			t.Errorf("%s: err = %v, want a hubapi.ValidationError on cursor", c.name, err)
		}
	}
	for _, position := range []string{"", "1", "1.", ".1", "x.1", "1.x", "99999999999999999999.1", "-99999999999999999.1", "253402300800000000.1"} {
		if _, _, err := parseQuarantinePosition(position); !isCursorError(err) {
			t.Errorf("quarantine position %q: err = %v, want a hubapi.ValidationError on cursor", position, err)
		}
	}
}

// rawCursor encodes text as a cursor without going through encodeCursor.
func rawCursor(text string) string { return base64.RawURLEncoding.EncodeToString([]byte(text)) }

func isCursorError(err error) bool {
	var v *hubapi.ValidationError
	return errors.As(err, &v) && v.Field == "cursor" && v.Code == hubapi.CodeInvalidRequest
}
