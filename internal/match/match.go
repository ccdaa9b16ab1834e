// Package match decides which subscriptions want an event (docs/concepts.md, Matching). It is
// pure: ingest loads the candidates, this package only judges them, and it
// reads no event catalog — an event nobody wants is fine.
package match

import (
	"fmt"
	"strings"

	"github.com/hubctl/hubctl/internal/routing"
)

// Verification states of a subscription (docs/concepts.md, Verification).
const (
	VerificationPending = routing.VerificationPending
	VerificationActive  = routing.VerificationActive
	VerificationFailed  = routing.VerificationFailed
)

// Subscription is what matching needs to know about one subscription, and
// Event what it needs to know about one accepted event.
type (
	Subscription = routing.Subscription
	Event        = routing.Event
)

// Matches applies every matching rule (docs/concepts.md, Matching).
func Matches(s Subscription, e Event) bool {
	return s.TenantID == e.TenantID &&
		s.Enabled &&
		s.VerificationState == VerificationActive &&
		s.SchemaMajor == e.SchemaMajor &&
		(s.Origin == "" || s.Origin == e.Source) &&
		AnyPatternMatches(s.EventTypes, e.Key)
}

// AnyPatternMatches reports whether key matches one of patterns.
func AnyPatternMatches(patterns []string, key string) bool {
	for _, p := range patterns {
		if PatternMatches(p, key) {
			return true
		}
	}
	return false
}

// PatternMatches reports whether one event_types entry matches key: "*"
// matches everything, "transaction.*" every key of resource type
// "transaction", anything else only itself.
func PatternMatches(pattern, key string) bool {
	if pattern == "*" {
		return true
	}
	if resource, ok := strings.CutSuffix(pattern, ".*"); ok {
		return len(key) > len(resource)+1 && strings.HasPrefix(key, resource) && key[len(resource)] == '.'
	}
	return pattern == key
}

// ValidatePattern checks one event_types entry as the API receives it: "*",
// "<resourcetype>.*" or "<resourcetype>.<eventtype>", where each part is
// [a-z0-9][a-z0-9_-]* like the CloudEvents attributes they match (docs/concepts.md, Events).
func ValidatePattern(p string) error {
	if p == "*" {
		return nil
	}
	resource, event, ok := strings.Cut(p, ".")
	if !ok {
		return fmt.Errorf("event type %q must be \"*\", \"<resourcetype>.*\" or \"<resourcetype>.<eventtype>\"", p)
	}
	if !isToken(resource) {
		return fmt.Errorf("event type %q: resource type must match [a-z0-9][a-z0-9_-]*", p)
	}
	if event != "*" && !isToken(event) {
		return fmt.Errorf("event type %q: event type must be \"*\" or match [a-z0-9][a-z0-9_-]*", p)
	}
	return nil
}

// isToken reports whether s matches [a-z0-9][a-z0-9_-]*.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}
