package api

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth bounds the nesting of a request body. No request of this API
// nests beyond a few levels; the bound keeps checkJSONText's stack small
// whatever arrives.
const maxJSONDepth = 32

// checkJSONText refuses, naming the field, what encoding/json would accept
// silently: a string holding invalid UTF-8 or a lone surrogate escape (both
// decode to U+FFFD, so the stored text would not be what was sent), and an
// object with the same key twice (the decoder keeps the last, so a proxy
// or log reading the first would see another request). Keys that differ
// only in letter case count as the same key, because struct fields match
// them regardless of case.
//
// A syntax error stops the check without an answer: decoding reports it
// with its offset.
func checkJSONText(body []byte) *apiError {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	type level struct {
		object bool
		keys   map[string]bool
		key    string // the object's current key, or the array's index
		index  int
		// expectKey: an object's next string token is a key.
		expectKey bool
	}
	var stack []level
	path := func(last string) string {
		var b strings.Builder
		for _, l := range stack[:len(stack)-1] {
			if l.object {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(l.key)
			} else {
				b.WriteString("[" + strconv.Itoa(l.index) + "]")
			}
		}
		if top := stack[len(stack)-1]; top.object {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(last)
		} else {
			b.WriteString("[" + strconv.Itoa(top.index) + "]")
		}
		return b.String()
	}
	start := int64(0)
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		end := dec.InputOffset()
		raw := body[start:end]
		start = end

		// A value inside an array moves its index on.
		valueInArray := len(stack) > 0 && !stack[len(stack)-1].object
		if valueInArray {
			if d, ok := tok.(json.Delim); !ok || d == '[' || d == '{' {
				stack[len(stack)-1].index++
			}
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if len(stack) == maxJSONDepth {
					return &apiError{status: 400, code: CodeInvalidRequest,
						message: "the request body nests deeper than " + strconv.Itoa(maxJSONDepth) + " levels",
						details: map[string]any{"offset": end - 1}}
				}
				stack = append(stack, level{object: t == '{', expectKey: t == '{', index: -1})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return nil
				}
				if top := &stack[len(stack)-1]; top.object {
					top.expectKey = true
				}
			}
			continue
		case string:
			if len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].expectKey {
				top := &stack[len(stack)-1]
				if decodedBadly(t, raw) {
					return invalidRequest(path(t), "field name "+strconv.Quote(t)+" is not valid UTF-8")
				}
				folded := strings.ToLower(t)
				if top.keys[folded] {
					return invalidRequest(path(t), "field "+strconv.Quote(path(t))+" appears more than once")
				}
				if top.keys == nil {
					top.keys = map[string]bool{}
				}
				top.keys[folded], top.key, top.expectKey = true, t, false
				continue
			}
			if decodedBadly(t, raw) {
				field := ""
				if len(stack) > 0 {
					field = path(stack[len(stack)-1].key)
				}
				return invalidRequest(field, "field "+strconv.Quote(field)+" is not valid UTF-8 text")
			}
		}
		if len(stack) == 0 {
			return nil
		}
		if top := &stack[len(stack)-1]; top.object {
			top.expectKey = true
		}
	}
}

// decodedBadly reports whether decoding raw (the bytes the string s was
// decoded from, with any separators before it) replaced something with
// U+FFFD: an invalid UTF-8 byte, or a \u escape of half a surrogate pair.
// Only a string holding U+FFFD can have been, which keeps the walk off
// the common path.
func decodedBadly(s string, raw []byte) bool {
	if !strings.ContainsRune(s, utf8.RuneError) {
		return false
	}
	if !utf8.Valid(raw) {
		return true
	}
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++ // the escaped byte: \\ and \" never start another escape
		if raw[i] != 'u' {
			continue
		}
		r, ok := hex4(raw[i+1:])
		if !ok {
			continue
		}
		i += 4
		switch {
		case utf16.IsSurrogate(r) && r < 0xdc00:
			// A high half must be followed by a low half.
			if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
				if low, ok := hex4(raw[i+3:]); ok && 0xdc00 <= low && low <= 0xdfff {
					i += 6
					continue
				}
			}
			return true
		case utf16.IsSurrogate(r):
			return true
		}
	}
	return false
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 16)
	return rune(n), err == nil
}
