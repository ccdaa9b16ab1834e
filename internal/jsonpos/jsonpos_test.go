package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func TestAt(t *testing.T) {
	text := []byte("{\n  \"naïve\": 1,\r\n\t\"b\": x\n}")
	cases := []struct {
		offset       int64
		line, column int
	}{
		{0, 1, 1},
		{1, 1, 2},   // the newline ending line 1
		{2, 2, 1},   // first byte of line 2
		{9, 2, 7},   // 'v', after the two-byte ï
		{24, 3, 7},  // 'x'
		{-5, 1, 1},  // clamped
		{999, 4, 2}, // clamped to the end
	}
	for _, c := range cases {
		got := At(text, c.offset)
		if got.Line != c.line || got.Column != c.column {
			t.Errorf("At(%d) = %v, want line %d, column %d", c.offset, got, c.line, c.column)
		}
	}
}

// TestDescribe places the errors of both ways of decoding, json.Unmarshal
// and a Decoder, and leaves alone the errors that have no place.
func TestDescribe(t *testing.T) {
	cases := []struct {
		name, text string
		want       string // from a Decoder and from json.Unmarshal
		offset     int64
	}{
		{"cut short", "{\n  \"name\": \"a\",\n  \"tags\": [\n", "the JSON text ends in the middle of a value at line 3, column 12", 28},
		{"cut short in a string", `{"name": "ab`, "the JSON text ends in the middle of a value at line 1, column 13", 12},
		{"missing colon", "{\n  \"name\" \"a\"\n}", "invalid character '\"' after object key at line 2, column 10", 11},
		{"bad literal", "{\"a\": 1,\n \"b\": nul }", "invalid character ' ' in literal null (expecting 'l') at line 2, column 10", 18},
		{"multi-byte before the error", `{"é": x}`, "invalid character 'x' looking for beginning of value at line 1, column 7", 7},
	}
	for _, c := range cases {
		text := []byte(c.text)
		var v any
		decErr := json.NewDecoder(bytes.NewReader(text)).Decode(&v)
		unmarshalErr := json.Unmarshal(text, &v)
		for how, err := range map[string]error{"Decoder": decErr, "Unmarshal": unmarshalErr} {
			if got := Describe(err, text); got != c.want {
				t.Errorf("%s, %s: Describe = %q, want %q", c.name, how, got, c.want)
			}
			if pos, ok := Of(err, text); !ok || pos.Offset != c.offset {
				t.Errorf("%s, %s: Of = %+v, %v, want offset %d", c.name, how, pos, ok, c.offset)
			}
		}
	}

	var typed struct{ N int }
	text := []byte(`{"N": "x"}`)
	typeErr := json.Unmarshal(text, &typed)
	other := errors.New("something else")
	for _, err := range []error{typeErr, other} {
		if got := Describe(err, text); got != err.Error() {
			t.Errorf("Describe(%v) = %q, want the message alone", err, got)
		}
		if _, ok := Of(err, text); ok {
			t.Errorf("Of(%v) found a position", err)
		}
	}
}
