package filter

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func sampleEvent() Event {
	return Event{
		ID:              "01890a5d-ac96-774b-bcce-b302099a8057",
		Source:          "midaz/ledger",
		Key:             "transaction.posted",
		Type:            "studio.lerian.midaz.transaction.posted",
		Subject:         "acct-42",
		Time:            time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
		SchemaVersion:   "1.2.0",
		TenantID:        "acme",
		DataContentType: "application/json",
		Data:            []byte(`{"amount": 150, "price": 9.75, "currency": "BRL", "big": 9007199254740993, "tags": ["vip", "pix"], "account": {"type": "savings"}, "items": [{"qty": 2}, {"qty": 5}]}`),
	}
}

func TestMatches(t *testing.T) {
	json := sampleEvent()
	text := sampleEvent()
	text.DataContentType = "text/plain"
	text.Data = []byte("amount=150")
	noContentType := sampleEvent()
	noContentType.DataContentType = ""
	cloudJSON := sampleEvent()
	cloudJSON.DataContentType = "application/cloudevents+json; charset=utf-8"
	broken := sampleEvent()
	broken.Data = []byte(`{"amount": 150`)

	tests := []struct {
		name   string
		expr   string
		event  Event
		want   bool
		errors bool // evaluation fails: no match, counted by the caller
	}{
		{"event key", `type == "transaction.posted"`, json, true, false},
		{"event key prefix", `type.startsWith("account.")`, json, false, false},
		{"full ce type", `ce_type.endsWith(".posted")`, json, true, false},
		{"id", `id == "01890a5d-ac96-774b-bcce-b302099a8057"`, json, true, false},
		{"source and subject", `source == "midaz/ledger" && subject == "acct-42"`, json, true, false},
		{"tenant", `tenant_id in ["acme", "globex"]`, json, true, false},
		{"schema version", `schema_version.startsWith("1.")`, json, true, false},
		{"time after", `time > timestamp("2026-01-01T00:00:00Z")`, json, true, false},
		{"time before", `time < timestamp("2026-01-01T00:00:00Z")`, json, false, false},
		{"integer field", `data.amount > 100`, json, true, false},
		{"integer equality", `data.amount == 150`, json, true, false},
		{"double field against an int", `data.price < 10`, json, true, false},
		{"big integer keeps every digit", `data.big == 9007199254740993`, json, true, false},
		{"string field", `data.currency == "BRL"`, json, true, false},
		{"nested field", `data.account.type == "savings"`, json, true, false},
		{"list membership", `"vip" in data.tags`, json, true, false},
		{"comprehension", `data.items.exists(i, i.qty > 4)`, json, true, false},
		{"has on a present field", `has(data.account)`, json, true, false},
		{"has on a missing field", `has(data.missing)`, json, false, false},
		{"missing field is an error", `data.missing == 1`, json, false, true},
		{"guarded missing field", `has(data.missing) && data.missing == 1`, json, false, false},
		{"type mismatch is an error", `data.currency > 3`, json, false, true},
		{"no data when not JSON", `data.amount > 100`, text, false, true},
		{"attributes without data", `type == "transaction.posted"`, text, true, false},
		{"absent content type is JSON", `data.amount == 150`, noContentType, true, false},
		{"+json content type", `data.amount == 150`, cloudJSON, true, false},
		{"unparsable JSON has no data", `data.amount == 150`, broken, false, true},
		{"dynamic result not a bool", `data.currency`, json, false, true},
		{"dynamic result a bool", `data.tags.size() == 2`, json, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(tt.expr)
			if err != nil {
				t.Fatalf("Compile(%q): %v", tt.expr, err)
			}
			got, err := p.Matches(NewInput(tt.event))
			if (err != nil) != tt.errors {
				t.Fatalf("Matches error = %v, want error: %v", err, tt.errors)
			}
			if got != tt.want {
				t.Fatalf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCompileRefuses(t *testing.T) {
	tests := []struct {
		name         string
		expr         string
		line, column int    // 0: no position
		message      string // part of the message
	}{
		{"empty", "  ", 0, 0, "empty"},
		{"syntax", `type == `, 1, 9, "Syntax error"},
		{"syntax on a later line", "type == \"a.b\" &&\n  subject ==== \"x\"", 2, 13, "Syntax error"},
		{"unknown variable", `kind == "a"`, 1, 1, "undeclared reference to 'kind'"},
		{"unknown function", `type.shout()`, 1, 11, "undeclared reference to 'shout'"},
		{"not a bool", `type + "x"`, 1, 1, "must be a bool"},
		{"wrong operand types", `time > 3`, 1, 6, "no matching overload"},
		{"nested comprehension", `data.items.all(a, data.items.all(b, a == b))`, 0, 0, "worst-case cost"},
		{"comprehension over string splits", `data.tags.exists(t, data.tags.exists(u, t == u))`, 0, 0, "worst-case cost"},
		{"too long", strings.Repeat("true && ", MaxExpressionChars/8) + "true", 0, 0, "characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(tt.expr)
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("Compile(%q) = %v, want an *Error", tt.expr, err)
			}
			if fe.Line != tt.line || fe.Column != tt.column {
				t.Errorf("position = %d:%d, want %d:%d (%s)", fe.Line, fe.Column, tt.line, tt.column, fe.Message)
			}
			if !strings.Contains(fe.Message, tt.message) {
				t.Errorf("message %q does not contain %q", fe.Message, tt.message)
			}
		})
	}
}

func TestExpensiveExpressionIsRefusedWithItsCost(t *testing.T) {
	_, err := Compile(`data.items.all(a, data.items.all(b, a.qty <= b.qty || a != b))`)
	var fe *Error
	if !errors.As(err, &fe) || fe.EstimatedCost <= MaxEstimatedCost {
		t.Fatalf("Compile = %v, want a refusal with an estimated cost over %d", err, MaxEstimatedCost)
	}
	// One pass over a list is within the limit.
	if _, err := Compile(`data.items.exists(i, i.qty > 4)`); err != nil {
		t.Fatalf("a single pass is refused: %v", err)
	}
}

func TestRuntimeCostLimitStopsAnEvaluation(t *testing.T) {
	// One pass is admitted at compile time, but over a list this long it
	// costs more than one evaluation may.
	e := sampleEvent()
	e.Data = []byte(`{"items": [` + strings.TrimSuffix(strings.Repeat(`{"qty": 1},`, RuntimeCostLimit/2), ",") + `]}`)
	p, err := Compile(`data.items.all(i, i.qty == 1 && i.qty < 2 && i.qty > 0)`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Matches(NewInput(e))
	if err == nil || got {
		t.Fatalf("Matches = %v, %v; want the cost limit to stop it", got, err)
	}
	if !strings.Contains(err.Error(), "cost") {
		t.Fatalf("error %q does not name the cost limit", err)
	}
}

func TestDataIsParsedOncePerInput(t *testing.T) {
	in := NewInput(sampleEvent())
	attrsOnly, _ := Compile(`type == "transaction.posted"`)
	if ok, err := attrsOnly.Matches(in); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if in.parsed {
		t.Fatal("a filter that does not read data parsed the payload")
	}
	reads, _ := Compile(`data.amount == 150`)
	if ok, err := reads.Matches(in); !ok || err != nil {
		t.Fatal(ok, err)
	}
	first := in.data
	// A second filter finds the parsed value; mutating it proves sharing.
	first.(map[string]any)["amount"] = int64(7)
	if ok, _ := reads.Matches(in); ok {
		t.Fatal("the payload was parsed again for the second filter")
	}
}

func TestCacheCompilesOncePerVersion(t *testing.T) {
	c := NewCache()
	id := [16]byte{1}
	v1 := time.Unix(100, 0)
	p1, err := c.Program(id, v1, `type == "a.b"`)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.Program(id, v1, `type == "a.b"`); again != p1 {
		t.Fatal("same version compiled twice")
	}
	p2, err := c.Program(id, v1.Add(time.Second), `type == "c.d"`)
	if err != nil || p2 == p1 {
		t.Fatalf("a new version reused the old program (%v)", err)
	}
	if _, err := c.Program([16]byte{2}, v1, `nope(`); err == nil {
		t.Fatal("a broken stored expression compiled")
	}
	if c.Len() != 2 {
		t.Fatalf("Len = %d, want 2", c.Len())
	}
}
