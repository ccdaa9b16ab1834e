// Package jsonpos says where in a JSON text encoding/json gave up, as a
// person looks for it: a line and a column, not only a byte offset. The
// API's invalid_request answers and the CLI's file readers use it, so a
// truncated or malformed document is reported the same way by both.
package jsonpos

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Position is a place in a JSON text.
type Position struct {
	Offset int64 // bytes before the place, from 0
	Line   int   // from 1
	Column int   // characters before the place on its line, plus 1
}

// String is the place as an editor shows it.
func (p Position) String() string {
	return fmt.Sprintf("line %d, column %d", p.Line, p.Column)
}

// At is the position of byte offset in text; an offset outside text is
// clamped to it. Lines end at '\n' (a '\r' before it counts as a
// character of the line it ends, which no one points at).
func At(text []byte, offset int64) Position {
	offset = max(0, min(offset, int64(len(text))))
	p := Position{Offset: offset, Line: 1, Column: 1}
	for i := 0; i < int(offset); {
		r, size := utf8.DecodeRune(text[i:])
		if r == '\n' {
			p.Line++
			p.Column = 1
		} else {
			p.Column++
		}
		i += size
	}
	return p
}

// Of is where err, from decoding text with encoding/json, lies: the
// offending byte of a syntax error, or, for a text that ends in the middle
// of a value, just after its last byte that is not white space (where
// more was wanted). ok is false for any other error: a value of the wrong
// type or an unknown field is better named by its field than placed.
func Of(err error, text []byte) (pos Position, ok bool) {
	pos, _, ok = locate(err, text)
	return pos, ok
}

// Describe is err's message with its position when Of finds one, or
// err's message alone. An early end is reworded: encoding/json's
// "unexpected EOF" says nothing to someone whose file was cut short.
func Describe(err error, text []byte) string {
	pos, early, ok := locate(err, text)
	switch {
	case !ok:
		return err.Error()
	case early:
		return "the JSON text ends in the middle of a value at " + pos.String()
	}
	return err.Error() + " at " + pos.String()
}

func locate(err error, text []byte) (pos Position, early, ok bool) {
	var syntax *json.SyntaxError
	switch {
	// A Decoder reports an early end as io.ErrUnexpectedEOF, json.Unmarshal
	// as a syntax error at the end of the text.
	case errors.Is(err, io.ErrUnexpectedEOF),
		errors.As(err, &syntax) && syntax.Error() == "unexpected end of JSON input":
		return At(text, endOfContent(text)), true, true
	case syntax != nil:
		// Offset counts the bytes read, the offending one included.
		return At(text, syntax.Offset-1), false, true
	}
	return Position{}, false, false
}

// endOfContent is the offset just after text's last byte that is not JSON
// white space.
func endOfContent(text []byte) int64 {
	end := len(text)
	for end > 0 {
		switch text[end-1] {
		case ' ', '\t', '\r', '\n':
			end--
			continue
		}
		break
	}
	return int64(end)
}
