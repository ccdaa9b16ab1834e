package event

// TenantStatus is the roster's answer about one tenant. The zero value is
// TenantUnknown, so a lookup that finds nothing can never admit a tenant.
type TenantStatus uint8

const (
	// TenantUnknown means the tenant is not in the roster.
	TenantUnknown TenantStatus = iota
	// TenantInactive means the tenant is in the roster but not active.
	TenantInactive
	// TenantActive means the tenant is in the roster and active.
	TenantActive
)

// RosterLookup answers rules 5 and 6 for a tenant id.
type RosterLookup func(tenantID string) TenantStatus

// InboxLookup answers rule 7: whether the inbox already holds the event
// (tenantID, eventID). eventID is in the lowercase form Parse produces.
type InboxLookup func(tenantID, eventID string) bool

// Admit applies the roster gate (rules 5 and 6) to the status of an event's
// tenant. It returns ok when the tenant is active; otherwise the discard
// verdict. Any status other than TenantUnknown and TenantActive counts as in
// the roster but not active.
func Admit(status TenantStatus) (v Verdict, ok bool) {
	switch status {
	case TenantActive:
		return Verdict{}, true
	case TenantUnknown:
		return Verdict{Kind: Discard, Reason: ReasonUnknownTenant, Detail: "tenant is not in the roster"}, false
	default:
		return Verdict{Kind: Discard, Reason: ReasonInactiveTenant, Detail: "tenant is in the roster but not active"}, false
	}
}

// Duplicate is rule 7's verdict, for an event whose (tenant, id) the inbox
// already holds.
func Duplicate() Verdict {
	return Verdict{Kind: Discard, Reason: ReasonDuplicate, Detail: "the inbox already holds an event with this tenant and id"}
}

// Accepted is rule 8's verdict.
func Accepted() Verdict {
	return Verdict{Kind: Accept}
}

// Decide gives a record its one verdict by applying all eight rules of
// the verdict rules (docs/concepts.md, Verdicts) in order. The event is returned whenever the record passed rules
// 1–4 (so a roster or duplicate discard still names its tenant and id), and
// is the zero Event otherwise. roster and inbox must not be nil.
func Decide(headers []Header, value []byte, opts Options, roster RosterLookup, inbox InboxLookup) (Event, Verdict) {
	ev, rejected, ok := Parse(headers, value, opts)
	if !ok {
		return Event{}, rejected
	}
	if v, admitted := Admit(roster(ev.TenantID)); !admitted {
		return ev, v
	}
	if inbox(ev.TenantID, ev.ID) {
		return ev, Duplicate()
	}
	return ev, Accepted()
}
