package opevents

import (
	"fmt"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/store/queue"

	"github.com/google/uuid"
)

func TestOnFailure(t *testing.T) {
	event := uuid.Must(uuid.NewV7())
	base := queue.RecordedFailure{
		Attempt:  queue.Attempt{SubscriptionID: uuid.Must(uuid.NewV7()), EventID: event.String(), StartedAt: time.Unix(100, 0), Duration: time.Second},
		TenantID: "acme", Live: true, SpanFailures: 1,
	}
	edit := func(f func(*queue.RecordedFailure)) queue.RecordedFailure {
		r := base
		f(&r)
		return r
	}
	for _, tc := range []struct {
		name    string
		failure queue.RecordedFailure
		after   int
		want    string
	}{
		{"the first failure", base, 5, "failing=false disabled=false dead=[]"},
		{"the threshold reached", edit(func(r *queue.RecordedFailure) { r.SpanFailures = 5 }), 5, "failing=true disabled=false dead=[]"},
		{"past the threshold, not yet reported", edit(func(r *queue.RecordedFailure) { r.SpanFailures = 9 }), 5, "failing=true disabled=false dead=[]"},
		{"already reported in this span", edit(func(r *queue.RecordedFailure) { r.SpanFailures, r.SpanReported = 6, true }), 5, "failing=false disabled=false dead=[]"},
		{"the default threshold", edit(func(r *queue.RecordedFailure) { r.SpanFailures = DefaultFailingAfter }), 0, "failing=true disabled=false dead=[]"},
		{"a subscription disabled or deleted meanwhile", edit(func(r *queue.RecordedFailure) { r.SpanFailures, r.Live = 5, false }), 5, "failing=false disabled=false dead=[]"},
		{"exhausted", edit(func(r *queue.RecordedFailure) { r.Result.Dead = true }), 5, fmt.Sprintf("failing=false disabled=false dead=[exhausted 1 [%s] 101]", event)},
		{"auto-disabled, its queue shed", edit(func(r *queue.RecordedFailure) {
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

func TestOnPoisonGroupsBySubscription(t *testing.T) {
	a, b := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	at := time.Unix(100, 0)
	var poisoned []queue.Poisoned
	for i := range 150 {
		poisoned = append(poisoned, queue.Poisoned{SubscriptionID: a, TenantID: "acme", EventSeq: int64(i)})
	}
	poisoned = append(poisoned, queue.Poisoned{SubscriptionID: b, TenantID: "globex", EventSeq: 7})
	got := OnPoison(poisoned, at)
	if len(got) != 2 || got[0].SubscriptionID != a || got[0].Count != 150 || len(got[0].Seqs) != 100 || got[0].Reason != "poison" ||
		got[1].SubscriptionID != b || got[1].TenantID != "globex" || got[1].Count != 1 || got[1].Seqs[0] != 7 || !got[1].At.Equal(at) {
		t.Fatalf("OnPoison = %+v", got)
	}
}
