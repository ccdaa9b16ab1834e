// Package activitytext is how an operational event (docs/operational-events.md)
// reads in one line: what its data adds to its type, and who made it. The
// CLI's `hubctl activity` and the portal's activity page show them alike.
package activitytext

import (
	"fmt"
	"strings"
)

// Summary says in a few words what an event's data adds to its type.
func Summary(key string, d map[string]any) string {
	switch key {
	case "hub.subscription_created":
		if sink := text(d["sink_type"]); sink != "" {
			return sink + " sink"
		}
	case "hub.subscription_updated":
		return "changed " + strings.Join(strings.Fields(strings.Trim(fmt.Sprint(d["changed"]), "[]")), ", ")
	case "hub.subscription_disabled":
		return text(d["trigger"])
	case "hub.secret_rotated":
		if at := text(d["previous_secret_expires_at"]); at != "" {
			return "previous secret signs until " + at
		}
	case "hub.verification_failed":
		return text(d["error"])
	case "hub.subscription_failing":
		return fmt.Sprintf("%v consecutive failures, last %s %s", d["consecutive_failures"], text(d["last_status"]), text(d["last_error"]))
	case "hub.deliveries_dead_lettered":
		return fmt.Sprintf("%v dead (%s) since %s", d["count"], text(d["reason"]), text(d["since"]))
	}
	return ""
}

// Actor says who made a change, from the event's actor object.
func Actor(v any) string {
	a, _ := v.(map[string]any)
	switch kind := text(a["kind"]); kind {
	case "api_key":
		return "key " + text(a["id"])
	case "portal":
		return "portal"
	default:
		return kind
	}
}

// text is v as a line shows it: "" for nothing.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return fmt.Sprintf("%g", v)
	}
	return fmt.Sprint(v)
}
