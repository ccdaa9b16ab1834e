package filter

import (
	"context"
	"errors"
	"math"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// Reasons an evaluation failed, the label matching counts and logs them
// under (docs/api.md, Content filters).
const (
	// ReasonInvalid: the stored expression no longer compiles.
	ReasonInvalid = "invalid"
	// ReasonEval: a missing field, a type mismatch, data on an event that
	// is not JSON, a result that is not a bool.
	ReasonEval = "eval_error"
	// ReasonCostLimit: the evaluation reached RuntimeCostLimit.
	ReasonCostLimit = "cost_limit"
	// ReasonTimeout: the evaluation ran past its wall-clock deadline.
	ReasonTimeout = "timeout"
	// ReasonBudget: the tenant had spent its filter budget for the batch,
	// so the filter was not evaluated at all.
	ReasonBudget = "budget_exceeded"
)

// Reasons lists every failure reason, for metrics that want them all.
var Reasons = []string{ReasonInvalid, ReasonEval, ReasonCostLimit, ReasonTimeout, ReasonBudget}

// ReasonOf classifies an error of Matches.
func ReasonOf(err error) string {
	var cancelled interpreter.EvalCancelledError
	switch {
	case errors.As(err, &cancelled) && cancelled.Cause == interpreter.CostLimitExceeded:
		return ReasonCostLimit
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &cancelled):
		return ReasonTimeout
	default:
		return ReasonEval
	}
}

// builtCost charges calls that CEL dispatches at run time (their overload
// is unknown when checked, as every call on a field of data is) by the
// size of what they read and build. CEL's own table prices only the
// overloads chosen at check time and charges one unit for the rest, so
// without this `data.blob + data.blob + …` builds megabytes for a few
// units. A byte read or built costs StringTraversalCostFactor (0.1), the
// figure CEL charges for its typed string functions: RuntimeCostLimit then
// bounds the bytes one evaluation can build to about ten times the limit.
// The cost is charged once the call returns, so the last call may build
// at most twice the largest string it was given before the limit stops it.
type builtCost struct{}

func (builtCost) CallCost(function, overloadID string, args []ref.Val, result ref.Val) *uint64 {
	if overloadID != "" {
		return nil // chosen when checked: CEL's table prices it
	}
	var cost uint64
	switch function {
	case "@in":
		if len(args) == 2 {
			if _, isList := args[1].(traits.Lister); isList {
				cost = size(args[1])
			}
		}
	case "matches":
		if len(args) == 2 {
			cost = bytesCost(args[0]) * uint64(math.Ceil(float64(size(args[1]))*0.25))
		}
	case "contains":
		if len(args) == 2 {
			cost = bytesCost(args[0]) * bytesCost(args[1])
		}
	case "startsWith", "endsWith":
		if len(args) == 2 {
			cost = bytesCost(args[1])
		}
	case "_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_":
		if len(args) == 2 {
			cost = min(bytesCost(args[0]), bytesCost(args[1]))
		}
	default:
		for _, a := range args {
			cost += bytesCost(a)
		}
	}
	cost += bytesCost(result)
	return &cost
}

// bytesCost is what reading or building v costs: 0.1 a byte of a string
// or bytes value, one unit for anything else.
func bytesCost(v ref.Val) uint64 {
	switch t := v.(type) {
	case types.String:
		return 1 + uint64(len(t))/10
	case types.Bytes:
		return 1 + uint64(len(t))/10
	}
	return 1
}

// size is v's length in bytes for strings and bytes (cheaper than CEL's
// count of runes, and never smaller), its element count for lists and
// maps, 1 otherwise.
func size(v ref.Val) uint64 {
	switch t := v.(type) {
	case types.String:
		return uint64(len(t))
	case types.Bytes:
		return uint64(len(t))
	case traits.Sizer:
		if n, ok := t.Size().(types.Int); ok && n > 0 {
			return uint64(n)
		}
	}
	return 1
}
