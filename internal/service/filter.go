package service

import (
	"errors"

	"github.com/hubctl/hubctl/internal/filter"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// CodeInvalidFilter refuses a subscription filter that does not compile or
// costs too much; details carry the position and CEL's message.
const CodeInvalidFilter = "invalid_filter"

// checkFilter compiles a subscription's filter expression, as creating
// and updating a subscription store it.
func checkFilter(expr string) (string, error) {
	if _, err := filter.Compile(expr); err != nil {
		return "", filterError(err)
	}
	return expr, nil
}

// filterError is the 400 of an expression filter.Compile refused: the
// message, and where it could be placed, the line and column (from 1),
// or the estimated cost that was over the limit.
func filterError(err error) *hubapi.ValidationError {
	var fe *filter.Error
	if !errors.As(err, &fe) {
		return &hubapi.ValidationError{Field: "filter", Code: CodeInvalidFilter, Message: "invalid filter: " + err.Error()}
	}
	details := map[string]any{"message": fe.Message}
	if fe.Line > 0 {
		details["position"] = map[string]int{"line": fe.Line, "column": fe.Column}
	}
	if fe.EstimatedCost > 0 {
		details["estimated_cost"] = fe.EstimatedCost
		details["cost_limit"] = filter.MaxEstimatedCost
	}
	return &hubapi.ValidationError{Field: "filter", Code: CodeInvalidFilter, Message: fe.Error(), Details: details}
}
