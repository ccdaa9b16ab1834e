package output

import (
	"bytes"
	"strings"
	"testing"
)

func TestJQ(t *testing.T) {
	value := map[string]any{
		"items": []map[string]any{
			{"id": "a", "seq": int64(9007199254740993), "ok": true},
			{"id": "b", "seq": 2, "ok": false},
		},
		"next_cursor": nil,
	}
	for _, tc := range []struct{ expr, want string }{
		{".items[].id", "a\nb\n"},
		{".items[0].seq", "9007199254740993\n"},
		{".items | map(select(.ok)) | length", "1\n"},
		{".items[1]", `{"id":"b","ok":false,"seq":2}` + "\n"},
		{".next_cursor", "null\n"},
		{"empty", ""},
		{"1.5", "1.5\n"},
		{"12345678901234567890123", "12345678901234567890123\n"},
	} {
		q, err := ParseJQ(tc.expr)
		if err != nil {
			t.Fatalf("ParseJQ(%q): %v", tc.expr, err)
		}
		var out bytes.Buffer
		if err := q.Write(&out, value); err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if out.String() != tc.want {
			t.Errorf("%s printed %q, want %q", tc.expr, out.String(), tc.want)
		}
	}
	if _, err := ParseJQ(".items["); err == nil || !strings.Contains(err.Error(), "--jq") {
		t.Errorf("a malformed expression: %v, want an error naming --jq", err)
	}
	q, _ := ParseJQ(".items | error(\"boom\")")
	if err := q.Write(&bytes.Buffer{}, value); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("a failing expression: %v, want its error", err)
	}
	if _, err := ParseJQ("env"); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	q, _ = ParseJQ("$ENV | length")
	if err := q.Write(&out, value); err != nil || out.String() != "0\n" {
		t.Errorf("$ENV shows %q (%v); the process environment must stay out of reach", out.String(), err)
	}
}
