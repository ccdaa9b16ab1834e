package autodisable

import (
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func TestDecide(t *testing.T) {
	const (
		window = DefaultWindow
		spread = DefaultSpread
		ns     = time.Nanosecond
	)
	span := func(since, last time.Duration) Span { return Span{FailingSince: at(since), LastFailureAt: at(last)} }
	tests := []struct {
		name   string
		killOn bool
		span   Span
		now    time.Duration
		want   bool
	}{
		{"both gates well past", true, span(0, 130*time.Hour), 130 * time.Hour, true},
		{"both gates exactly equal", true, span(0, spread), window, true},
		{"sustained one nanosecond short", true, span(0, spread), window - ns, false},
		{"spread one nanosecond short", true, span(0, spread-ns), window, false},
		{"sustained only: a burst long ago, then silence", true, span(0, time.Hour), 200 * time.Hour, false},
		{"spread only: failing for half a day", true, span(0, 13*time.Hour), 13 * time.Hour, false},
		{"neither gate", true, span(0, time.Minute), time.Hour, false},
		{"kill switch off", false, span(0, 130*time.Hour), 130 * time.Hour, false},
		{"no span", true, Span{}, 1000 * time.Hour, false},
		{"span without last failure", true, Span{FailingSince: t0}, 1000 * time.Hour, false},
		{"clock behind the span", true, span(0, spread), -time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Enabled: tt.killOn, Span: tt.span, Now: at(tt.now), Window: window, Spread: spread}
			if got := Decide(in); got != tt.want {
				t.Errorf("Decide(%+v) = %v, want %v", in, got, tt.want)
			}
		})
	}
}

func TestZeroThresholdsDisableOnAnySpan(t *testing.T) {
	in := Input{Enabled: true, Span: OnFailure(Span{}, t0), Now: t0}
	if !Decide(in) {
		t.Error("with zero window and spread an open span should disable")
	}
	in.Span = OnSuccess()
	if Decide(in) {
		t.Error("with zero window and spread no span still must not disable")
	}
}

func TestSpanTransitions(t *testing.T) {
	tests := []struct {
		name string
		from Span
		now  time.Duration
		want Span
	}{
		{"first failure opens the span", Span{}, time.Hour, Span{at(time.Hour), at(time.Hour)}},
		{"later failure extends last_failure_at", Span{t0, at(time.Hour)}, 5 * time.Hour, Span{t0, at(5 * time.Hour)}},
		{"failure at the same instant changes nothing", Span{t0, at(time.Hour)}, time.Hour, Span{t0, at(time.Hour)}},
		{"an older failure never shrinks the span", Span{t0, at(time.Hour)}, time.Minute, Span{t0, at(time.Hour)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OnFailure(tt.from, at(tt.now)); got != tt.want {
				t.Errorf("OnFailure(%+v, +%v) = %+v, want %+v", tt.from, tt.now, got, tt.want)
			}
		})
	}
	if got := OnSuccess(); got.IsOpen() || got != (Span{}) {
		t.Errorf("OnSuccess() = %+v, want the zero Span", got)
	}
}

// TestOutageTimeline follows a destination that fails every 10h from t0: the
// subscription is disabled at the first failure at least 120h after the first
// one, and a success in between starts the clock again.
func TestOutageTimeline(t *testing.T) {
	decideAt := func(s Span, now time.Time) bool {
		return Decide(Input{Enabled: true, Span: s, Now: now, Window: DefaultWindow, Spread: DefaultSpread})
	}
	var s Span
	for h := time.Duration(0); h <= 120*time.Hour; h += 10 * time.Hour {
		s = OnFailure(s, at(h))
		if got, want := decideAt(s, at(h)), h >= 120*time.Hour; got != want {
			t.Fatalf("after the failure at +%v Decide = %v, want %v", h, got, want)
		}
	}

	s = Span{}
	for h := time.Duration(0); h <= 120*time.Hour; h += 10 * time.Hour {
		if h == 60*time.Hour {
			s = OnSuccess()
			continue
		}
		s = OnFailure(s, at(h))
		if decideAt(s, at(h)) {
			t.Fatalf("disabled at +%v although a success at +60h restarted the span", h)
		}
	}
	if !s.FailingSince.Equal(at(70 * time.Hour)) {
		t.Errorf("span restarted at %v, want +70h", s.FailingSince.Sub(t0))
	}
}
