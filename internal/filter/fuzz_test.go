package filter

import (
	"testing"
	"time"
)

// FuzzCompileAndMatch feeds arbitrary expressions and payloads to the two
// readers of tenant input: Compile must refuse or accept without
// panicking, and an accepted program must evaluate any payload within its
// limits.
func FuzzCompileAndMatch(f *testing.F) {
	f.Add(`data.amount > 100`, []byte(`{"amount": 150}`))
	f.Add(`data.items.exists(i, i.qty > 4)`, []byte(`{"items": [{"qty": 5}]}`))
	f.Add(`type.matches("^a.*")`, []byte(`not json`))
	f.Add(`has(data.a.b) || data["x"] == 1.5`, []byte(`{"a": {"b": null}}`))
	f.Add(`time > timestamp("2026-01-01T00:00:00Z") && size(subject) < 3`, []byte(`[1, 2, 3]`))
	f.Add(`data.items.all(a, data.items.all(b, a == b))`, []byte(`{}`))
	f.Add("((((((((((", []byte(`{"deep": [[[[[[[[[[]]]]]]]]]]}`))
	f.Fuzz(func(t *testing.T, expr string, payload []byte) {
		p, err := Compile(expr)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Compile(%q) error %T, want *Error", expr, err)
			}
			return
		}
		in := NewInput(Event{ID: "x", Key: "a.b", TenantID: "t", Time: time.Unix(0, 0), Data: payload})
		_, _ = p.Matches(in)
	})
}
