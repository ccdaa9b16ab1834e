package activity

import (
	"testing"
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestFeedPrintsEachEventOnceAndRereadsALookback(t *testing.T) {
	since := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return since.Add(time.Duration(s) * time.Second) }
	ev := func(id string, s int) hubapi.InboxEvent { return hubapi.InboxEvent{ID: id, ReceivedAt: at(s)} }
	f := newFeed(since)
	for _, step := range []struct {
		read     []hubapi.InboxEvent
		want     string
		wantFrom time.Time
	}{
		{nil, "", since},
		{[]hubapi.InboxEvent{ev("a", 10), ev("b", 30)}, "ab", since},
		// b again, and c, which committed late with an earlier time.
		{[]hubapi.InboxEvent{ev("c", 20), ev("b", 30)}, "c", since},
		{[]hubapi.InboxEvent{ev("d", 200)}, "d", at(140)},
		{[]hubapi.InboxEvent{ev("d", 200), ev("e", 201)}, "e", at(141)},
	} {
		got := ""
		for _, e := range f.fresh(step.read) {
			got += e.ID
		}
		if got != step.want || !f.from().Equal(step.wantFrom) {
			t.Fatalf("read %v printed %q from %s, want %q from %s", step.read, got, f.from(), step.want, step.wantFrom)
		}
	}
	if _, kept := f.printed["a"]; kept {
		t.Error("an id before the next read's start is still kept")
	}
}
