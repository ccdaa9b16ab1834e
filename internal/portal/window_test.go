package portal

import (
	"errors"
	"testing"
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestDeliveryWindow(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		since, until         string
		wantSince, wantUntil string
		wantField            string
	}{
		{"", "", "", "", ""},
		{"1h", "", "2026-03-01T11:00:00Z", "", ""},
		{"2026-02-28T13:00:00+01:00", "30m", "2026-02-28T12:00:00Z", "2026-03-01T11:30:00Z", ""},
		{"yesterday", "", "", "", "since"},
		{"", "-1h", "", "", "until"},
	} {
		since, until, err := deliveryWindow(tc.since, tc.until, now)
		var invalid *hubapi.ValidationError
		field := ""
		if errors.As(err, &invalid) {
			field = invalid.Field
		}
		if since != tc.wantSince || until != tc.wantUntil || field != tc.wantField || (err == nil) != (tc.wantField == "") {
			t.Errorf("%q, %q: %q, %q, %v; want %q, %q on %q", tc.since, tc.until, since, until, err, tc.wantSince, tc.wantUntil, tc.wantField)
		}
	}
}
