// Package filter compiles and evaluates subscription content filters: CEL
// expressions (github.com/google/cel-go) over an event's attributes and,
// when the event carries JSON, its data. It does no I/O: the API compiles
// an expression to accept or refuse it, ingest compiles stored ones (see
// Cache) and evaluates them at match time.
//
// A filter must not stall ingest, which evaluates it for every matching
// event inside the batch's transaction. Three limits see to that: an
// expression whose worst case, as CEL's cost estimator reckons it with
// every string, list and map as large as the largest event, exceeds
// MaxEstimatedCost is refused when compiled; each evaluation stops at
// RuntimeCostLimit, which charges the bytes a call reads and builds
// (builtCost); and MatchesWithin stops a pass over a list at a wall-clock
// deadline. A failed evaluation is an error for matching to account for
// (ReasonOf classifies it); matching also bounds what one tenant's filters
// may spend in one batch.
package filter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

const (
	// MaxExpressionChars bounds the text of one filter.
	MaxExpressionChars = 4096
	// MaxEstimatedCost is the largest worst-case cost, in CEL's cost units
	// (about one per comparison or field access), a filter may have. The
	// estimate takes every list as long as the largest event (maxSize
	// elements), so it admits one pass over a list doing up to about 50
	// units of work per element (filter, map, exists with a few
	// comparisons), and refuses a pass inside a pass, whose estimate is the
	// square of maxSize, 10^12. What one evaluation really spends is
	// bounded at run time, by RuntimeCostLimit and the caller's deadline.
	MaxEstimatedCost = 50_000_000
	// RuntimeCostLimit stops one evaluation: a pass over a realistic
	// payload costs a few thousand units, about a tenth of a millisecond,
	// and at 0.1 unit a byte no evaluation builds more than a few MB of
	// strings.
	RuntimeCostLimit = 100_000
	// interruptEvery is how many comprehension steps go between two looks
	// at MatchesWithin's deadline.
	interruptEvery = 64
	// maxSize is the largest size any string, list or map of an event can
	// have: an event is at most 1 MiB (the hub's largest accepted event).
	maxSize = 1 << 20
)

// Variables are the names a filter can use; data is absent from events
// that do not carry JSON.
var Variables = []string{"id", "source", "type", "ce_type", "subject", "time", "schema_version", "tenant_id", "data"}

// env is the one CEL environment every filter is compiled in: it is
// immutable and safe for concurrent use.
var env = mustEnv()

func mustEnv() *cel.Env {
	e, err := cel.NewEnv(
		cel.Variable("id", cel.StringType),
		cel.Variable("source", cel.StringType),
		cel.Variable("type", cel.StringType),
		cel.Variable("ce_type", cel.StringType),
		cel.Variable("subject", cel.StringType),
		cel.Variable("time", cel.TimestampType),
		cel.Variable("schema_version", cel.StringType),
		cel.Variable("tenant_id", cel.StringType),
		cel.Variable("data", cel.DynType),
		cel.ParserExpressionSizeLimit(MaxExpressionChars),
	)
	if err != nil {
		panic(fmt.Sprintf("filter: CEL environment: %v", err)) // the declarations above are constant
	}
	return e
}

// Error is why an expression was refused: a syntax or type error at a
// position, or a worst-case cost over the limit.
type Error struct {
	Message string
	// Line and Column locate the first error, both from 1; 0 when the
	// error has no position (a cost over the limit).
	Line, Column int
	// EstimatedCost is the worst case of an expression refused for its
	// cost; 0 otherwise.
	EstimatedCost uint64
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("invalid filter at line %d, column %d: %s", e.Line, e.Column, e.Message)
	}
	return "invalid filter: " + e.Message
}

// Program is a compiled filter, safe for concurrent use.
type Program struct {
	prg      cel.Program
	usesData bool
	// loops is whether the expression has a comprehension (all, exists,
	// filter, map…), the only kind of step a deadline can interrupt.
	loops bool
}

// Compile checks expr and prepares it for evaluation. Its error is always
// an *Error.
func Compile(expr string) (*Program, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, &Error{Message: "the expression is empty; leave filter out (or null) to match every event"}
	}
	if n := len([]rune(expr)); n > MaxExpressionChars {
		return nil, &Error{Message: fmt.Sprintf("the expression has %d characters, more than %d", n, MaxExpressionChars)}
	}
	ast, iss := env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, issueError(iss.Errors())
	}
	if t := ast.OutputType(); !t.IsExactType(types.BoolType) && !t.IsExactType(types.DynType) {
		return nil, &Error{Line: 1, Column: 1, Message: fmt.Sprintf("the expression must be a bool, it is a %s", t)}
	}
	est, err := env.EstimateCost(ast, sizeBound{})
	if err != nil {
		return nil, &Error{Message: "cannot estimate the expression's cost: " + err.Error()}
	}
	if est.Max > MaxEstimatedCost {
		return nil, &Error{EstimatedCost: est.Max, Message: fmt.Sprintf(
			"the expression's worst-case cost is %s, more than the limit of %d (a pass over a list inside a pass over a list costs the square of the payload's size)",
			costText(est.Max), MaxEstimatedCost)}
	}
	prg, err := env.Program(ast, cel.CostTracking(builtCost{}), cel.CostLimit(RuntimeCostLimit),
		cel.InterruptCheckFrequency(interruptEvery), cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return nil, &Error{Message: err.Error()}
	}
	return &Program{prg: prg, usesData: referencesData(ast), loops: hasComprehension(ast)}, nil
}

func costText(c uint64) string {
	if c == ^uint64(0) {
		return "unbounded"
	}
	return fmt.Sprint(c)
}

// issueError reports the first of CEL's errors with its position.
// CEL's columns count from 0.
func issueError(errs []*cel.Error) *Error {
	if len(errs) == 0 {
		return &Error{Message: "the expression does not compile"}
	}
	first := errs[0]
	e := &Error{Message: first.Message}
	if loc := first.Location; loc != nil && loc.Line() > 0 {
		e.Line, e.Column = loc.Line(), loc.Column()+1
	}
	return e
}

// referencesData reports whether the checked expression reads data, so
// events of filters that do not are never parsed on their behalf.
func referencesData(ast *cel.Ast) bool {
	for _, r := range ast.NativeRep().ReferenceMap() {
		if r.Name == "data" {
			return true
		}
	}
	return false
}

// hasComprehension reports whether the checked expression loops.
func hasComprehension(ast *cel.Ast) bool {
	found := false
	celast.PreOrderVisit(ast.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		found = found || e.Kind() == celast.ComprehensionKind
	}))
	return found
}

// sizeBound tells CEL's cost estimator that nothing in an event is larger
// than the largest event; without it every size is unbounded and every
// pass over a list would be refused.
type sizeBound struct{}

func (sizeBound) EstimateSize(checker.AstNode) *checker.SizeEstimate {
	return &checker.SizeEstimate{Min: 0, Max: maxSize}
}

func (sizeBound) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// ErrNotBool is an evaluation whose result is not a bool: an expression of
// dynamic type, such as `data.flag`, over data where it is something else.
var ErrNotBool = errors.New("the filter's result is not a bool")

// Matches evaluates the filter over in, with no deadline. An error (a
// missing field, a type mismatch, the runtime cost limit) is for the
// caller to account for; the event does not match.
func (p *Program) Matches(in *Input) (bool, error) {
	return p.MatchesWithin(in, 0)
}

// MatchesWithin is Matches stopped after timeout (none when 0), an error
// ReasonOf calls ReasonTimeout. Only a comprehension can run long under
// RuntimeCostLimit, so only those pay for a deadline; parsing the payload
// for the first filter that reads it is not interrupted (it is linear in
// the payload's size).
func (p *Program) MatchesWithin(in *Input, timeout time.Duration) (bool, error) {
	vars := in.activation(p.usesData)
	var (
		out ref.Val
		err error
	)
	if timeout > 0 && p.loops {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		out, _, err = p.prg.ContextEval(ctx, vars)
		cancel()
	} else {
		out, _, err = p.prg.Eval(vars)
	}
	if err != nil {
		return false, err
	}
	return resultBool(out)
}

func resultBool(out ref.Val) (bool, error) {
	if b, ok := out.Value().(bool); ok {
		return b, nil
	}
	return false, ErrNotBool
}

// Event is what a filter sees of one event.
type Event struct {
	ID              string
	Source          string
	Key             string // the event key, the filter's `type`
	Type            string // the full CloudEvents type, the filter's `ce_type`
	Subject         string
	Time            time.Time
	SchemaVersion   string
	TenantID        string
	DataContentType string
	Data            []byte
}
