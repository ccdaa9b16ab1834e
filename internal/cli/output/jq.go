package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"

	"github.com/itchyny/gojq"
)

// JQ is a compiled --jq expression: what scripts use to pick fields out
// of a command's JSON without a jq of their own, as gh's --jq does.
type JQ struct {
	expr string
	code *gojq.Code
}

// ParseJQ compiles expr. Its errors name the expression and what is wrong
// with it, for the command line to report as a usage error.
func ParseJQ(expr string) (*JQ, error) {
	query, err := gojq.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("invalid --jq expression %q: %w", expr, err)
	}
	code, err := gojq.Compile(query, gojq.WithEnvironLoader(func() []string { return nil }))
	if err != nil {
		return nil, fmt.Errorf("invalid --jq expression %q: %w", expr, err)
	}
	return &JQ{expr: expr, code: code}, nil
}

// Write runs the expression over v's JSON form and writes each result on
// a line of its own: strings as they are (so `--jq .id` prints a bare id a
// shell can use), everything else as compact JSON.
func (q *JQ) Write(w io.Writer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var input any
	dec := json.NewDecoder(bytes.NewReader(raw))
	// Numbers stay exact: integers are handed to gojq as integers, so a
	// large seq or offset is never rounded through float64.
	dec.UseNumber()
	if err := dec.Decode(&input); err != nil {
		return err
	}
	iter := q.code.Run(normalizeNumbers(input))
	for {
		result, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, isErr := result.(error); isErr {
			if halt, ok := err.(*gojq.HaltError); ok && halt.Value() == nil {
				return nil
			}
			return fmt.Errorf("--jq %s: %w", q.expr, err)
		}
		if s, isString := result.(string); isString {
			if _, err := io.WriteString(w, s+"\n"); err != nil {
				return err
			}
			continue
		}
		line, err := gojq.Marshal(result)
		if err != nil {
			return fmt.Errorf("--jq %s: %w", q.expr, err)
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return err
		}
	}
}

// normalizeNumbers turns json.Number into the number types gojq works on:
// int where the value is a whole number that fits, a big integer past
// that, float64 for the rest.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		if b, ok := new(big.Int).SetString(x.String(), 10); ok {
			return b
		}
		f, _ := x.Float64()
		return f
	}
	return v
}
