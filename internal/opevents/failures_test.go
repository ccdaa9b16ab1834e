package opevents

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/store"
)

func TestOnFailure(t *testing.T) {
	event := uuid.Must(uuid.NewV7())
	base := store.RecordedFailure{
		Attempt:  store.Attempt{SubscriptionID: uuid.Must(uuid.NewV7()), EventID: event.String(), StartedAt: time.Unix(100, 0), Duration: time.Second},
		TenantID: "acme", Live: true, SpanFailures: 1,
	}
	edit := func(f func(*store.RecordedFailure)) store.RecordedFailure {
		r := base
		f(&r)
		return r
	}
	for _, tc := range []struct {
		name    string
		failure store.RecordedFailure
		after   int
		want    string
	}{
		{"the first failure", base, 5, "failing=false disabled=false dead=[]"},
		{"the threshold reached", edit(func(r *store.RecordedFailure) { r.SpanFailures = 5 }), 5, "failing=true disabled=false dead=[]"},
		{"past the threshold, not yet reported", edit(func(r *store.RecordedFailure) { r.SpanFailures = 9 }), 5, "failing=true disabled=false dead=[]"},
		{"already reported in this span", edit(func(r *store.RecordedFailure) { r.SpanFailures, r.SpanReported = 6, true }), 5, "failing=false disabled=false dead=[]"},
		{"the default threshold", edit(func(r *store.RecordedFailure) { r.SpanFailures = DefaultFailingAfter }), 0, "failing=true disabled=false dead=[]"},
		{"a subscription disabled or deleted meanwhile", edit(func(r *store.RecordedFailure) { r.SpanFailures, r.Live = 5, false }), 5, "failing=false disabled=false dead=[]"},
		{"exhausted", edit(func(r *store.RecordedFailure) { r.Result.Dead = true }), 5, fmt.Sprintf("failing=false disabled=false dead=[exhausted 1 [%s] 101]", event)},
		{"auto-disabled, its queue shed", edit(func(r *store.RecordedFailure) {
			r.SpanFailures, r.Result.AutoDisabled, r.Result.ShedJobs = 7, true, 40
		}), 5, "failing=true disabled=true dead=[subscription_disabled 40 [] 101]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := OnFailure(tc.failure, tc.after)
			got := fmt.Sprintf("failing=%v disabled=%v dead=[", r.Failing, r.Disabled)
			for _, d := range r.DeadLetters {
				got += fmt.Sprintf("%s %d %v %d", d.Reason, d.Count, d.EventIDs, d.At.Unix())
			}
			if got += "]"; got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
