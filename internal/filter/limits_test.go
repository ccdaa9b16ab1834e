package filter

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// The expressions docs/api.md (Content filters) gives as accepted; each
// must compile and match the sample event.
var documentedExamples = []string{
	`data.amount > 100 && data.currency == "BRL"`,
	`subject.startsWith("acct-")`,
	`has(data.account) && data.account.type == "savings"`,
	`data.items.exists(i, i.qty > 4)`,
	`data.tags.filter(t, t.startsWith("v")).size() == 1`,
	`data.items.map(i, i.qty * 2).exists(q, q >= 10)`,
	`data.items.all(i, has(i.qty) && i.qty > 0 && i.qty < 100)`,
}

func TestDocumentedExamplesAreAccepted(t *testing.T) {
	for _, expr := range documentedExamples {
		p, err := Compile(expr)
		if err != nil {
			t.Errorf("Compile(%q): %v", expr, err)
			continue
		}
		if ok, err := p.Matches(NewInput(sampleEvent())); !ok || err != nil {
			t.Errorf("%q over the sample event = %v, %v; want a match", expr, ok, err)
		}
	}
}

func TestOnePassOverAListIsAccepted(t *testing.T) {
	for _, expr := range []string{
		`data.items.filter(i, i.startsWith('a')).size() > 0`,
		`data.items.exists(i, i.name.startsWith("a") || i.name.endsWith("z") || i.qty > 3)`,
	} {
		if _, err := Compile(expr); err != nil {
			t.Errorf("Compile(%q): %v", expr, err)
		}
	}
}

// bigBlob is an event whose data holds one string of n bytes.
func bigBlob(n int) *Input {
	e := sampleEvent()
	e.Data = []byte(`{"blob": "` + strings.Repeat("x", n) + `", "items": [` + strings.TrimSuffix(strings.Repeat(`1,`, 5000), ",") + `]}`)
	in := NewInput(e)
	in.activation(true) // parsed before measuring: the filter's own work is what is bounded
	return in
}

func TestBuildingStringsIsCharged(t *testing.T) {
	concat := func(n int) string {
		return "size(" + strings.TrimSuffix(strings.Repeat("data.blob + ", n), " + ") + ") > 0"
	}
	tests := []struct {
		name     string
		expr     string
		blob     int
		reason   string // "" when it must match
		maxBuilt uint64 // bytes the evaluation may allocate at most (the race detector allocates some too); unbounded concatenation allocates 55 MB
	}{
		{"concatenations of a large field", concat(12), 900_000, ReasonCostLimit, 8 << 20},
		{"one concatenation of a large field", concat(2), 900_000, ReasonCostLimit, 8 << 20},
		{"concatenations of a small field", concat(12), 100, "", 8 << 20},
		{"a large field searched", `data.blob.startsWith("x") && !data.blob.contains("y") && data.blob != "x"`, 900_000, "", 8 << 20},
		{"a large list searched twice", `2 in data.items || 3 in data.items || 1 in data.items`, 10, "", 8 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			in := bigBlob(tt.blob)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			ok, err := p.Matches(in)
			runtime.ReadMemStats(&after)
			if tt.reason == "" {
				if !ok || err != nil {
					t.Fatalf("Matches = %v, %v; want a match", ok, err)
				}
			} else if got := ReasonOf(err); err == nil || got != tt.reason {
				t.Fatalf("Matches = %v, %v (reason %q); want reason %q", ok, err, got, tt.reason)
			}
			if built := after.TotalAlloc - before.TotalAlloc; built > tt.maxBuilt {
				t.Errorf("the evaluation allocated %d bytes, more than %d", built, tt.maxBuilt)
			}
		})
	}
}

func TestMatchesWithinStopsALoopAtItsDeadline(t *testing.T) {
	p, err := Compile(`data.items.all(i, i == 1)`)
	if err != nil {
		t.Fatal(err)
	}
	in := bigBlob(1)
	// A deadline already past is seen at the first interrupt check, well
	// inside the list's 5000 steps.
	_, err = p.MatchesWithin(in, 1)
	if got := ReasonOf(err); err == nil || got != ReasonTimeout {
		t.Fatalf("MatchesWithin = %v (reason %q), want a timeout", err, got)
	}
	// Without a deadline the same evaluation completes.
	if ok, err := p.MatchesWithin(in, 0); !ok || err != nil {
		t.Fatalf("MatchesWithin without a deadline = %v, %v", ok, err)
	}
}

func TestReasonOf(t *testing.T) {
	missing, _ := Compile(`data.missing == 1`)
	_, err := missing.Matches(NewInput(sampleEvent()))
	if got := ReasonOf(err); got != ReasonEval {
		t.Errorf("missing field: reason %q, want %q", got, ReasonEval)
	}
	if got := ReasonOf(ErrNotBool); got != ReasonEval {
		t.Errorf("not a bool: reason %q, want %q", got, ReasonEval)
	}
	if got := ReasonOf(errors.New("x")); got != ReasonEval {
		t.Errorf("other: reason %q, want %q", got, ReasonEval)
	}
}
