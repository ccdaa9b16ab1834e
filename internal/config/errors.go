package config

import (
	"fmt"
	"strconv"
	"strings"
)

// ConfigFileFlag names the config file in problems about the file itself.
const ConfigFileFlag = "--config"

// Problem is one bad setting, or a problem with the config file.
type Problem struct {
	Setting string // environment variable name, or ConfigFileFlag
	Value   string // as given, masked when the setting is secret
	Reason  string // what is allowed, e.g. "must be an integer from 1 to 1024"
}

// String renders the problem as one line an operator can act on, e.g.
// invalid STREAMING_HUB_DISPATCH_WORKERS="abc": must be an integer from 1 to 1024
func (p Problem) String() string {
	return "invalid " + p.Setting + "=" + strconv.Quote(p.Value) + ": " + oneLine(p.Reason)
}

// ValidationError reports every problem Load found, so an operator fixes
// them in one round rather than one per restart.
type ValidationError struct {
	Problems []Problem
}

// Error returns one line per problem.
func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// oneLine keeps a reason on one line even when it quotes text (a YAML
// parser message, a regexp fragment) that spans several.
func oneLine(s string) string {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	for i, f := range fields {
		fields[i] = strings.TrimSpace(f)
	}
	return strings.Join(fields, "; ")
}

// SetupError is a configuration the hub cannot work with although every
// setting parsed: a required setting is missing (no key-encryption key, no
// database), or what one names is unusable. Like a ValidationError it is
// bad configuration, which the CLI answers with exit code 2.
type SetupError struct {
	Err error
}

func (e *SetupError) Error() string { return e.Err.Error() }

func (e *SetupError) Unwrap() error { return e.Err }

// Setupf builds a SetupError.
func Setupf(format string, args ...any) error {
	return &SetupError{Err: fmt.Errorf(format, args...)}
}
