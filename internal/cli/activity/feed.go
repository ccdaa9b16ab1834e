package activity

import (
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// lookback is how far before the newest event a follower reads again. An
// event's received_at is its transaction's start and its seq is drawn
// before it commits, so an event may become visible after one with a later
// seq and time; one whose transaction took longer than this would be
// missed by a follower (never by a read without --follow).
const lookback = time.Minute

// feed is what a follower has printed: every read starts lookback before
// the newest event printed, and events already printed are left out.
type feed struct {
	since   time.Time
	newest  time.Time
	printed map[string]time.Time // id → received_at
}

func newFeed(since time.Time) *feed {
	return &feed{since: since, printed: map[string]time.Time{}}
}

// from is where the next read starts.
func (f *feed) from() time.Time {
	if at := f.newest.Add(-lookback); at.After(f.since) {
		return at
	}
	return f.since
}

// fresh are the events of a read not printed before, in the read's order,
// which are then counted as printed. Ids older than the next read's start
// are forgotten: no read returns them again.
func (f *feed) fresh(events []hubapi.InboxEvent) []hubapi.InboxEvent {
	var out []hubapi.InboxEvent
	for _, e := range events {
		if _, seen := f.printed[e.ID]; seen {
			continue
		}
		f.printed[e.ID] = e.ReceivedAt
		if e.ReceivedAt.After(f.newest) {
			f.newest = e.ReceivedAt
		}
		out = append(out, e)
	}
	for id, at := range f.printed {
		if at.Before(f.from()) {
			delete(f.printed, id)
		}
	}
	return out
}
