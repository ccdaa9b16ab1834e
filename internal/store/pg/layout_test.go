package pg

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestIDDayIsTheUTCDayOfTheIDsOwnTime(t *testing.T) {
	for _, at := range []time.Time{
		time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 6, 23, 59, 59, 999e6, time.UTC),
		time.Date(2026, 12, 7, 1, 30, 0, 0, time.FixedZone("UTC+3", 3*3600)), // still 6 Dec in UTC
	} {
		id := uuid.MustParse(UUIDAt(at))
		if got, want := IDDay(id), time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
			t.Errorf("IDDay(%s) = %v, want %v", id, got, want)
		}
	}
}
