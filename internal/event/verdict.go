package event

// Kind is what happens to a record. Its values are the words the conformance
// vectors use, so they can label metrics and logs as they are.
type Kind string

const (
	// Accept stores the event in the inbox and matches it.
	Accept Kind = "accept"
	// Discard counts the record and drops it; nothing is stored.
	Discard Kind = "discard"
	// Quarantine stores the raw record as a poison record; it is never retried.
	Quarantine Kind = "quarantine"
)

// Reason is the fixed code explaining a discard or a quarantine (docs/concepts.md, Verdicts).
type Reason string

const (
	// ReasonDuplicateAttribute is rule 1: an attribute appears twice with
	// different values.
	ReasonDuplicateAttribute Reason = "duplicate_attribute"
	// ReasonSystemEvent is rule 2: systemevent is true.
	ReasonSystemEvent Reason = "system_event"
)

// Rule 3: the first attribute, in the order of the attribute table (docs/concepts.md, Events), that is
// missing/empty or malformed. Only required attributes can be missing.
const (
	ReasonMissingSpecVersion     Reason = "missing_specversion"
	ReasonInvalidSpecVersion     Reason = "invalid_specversion"
	ReasonMissingID              Reason = "missing_id"
	ReasonInvalidID              Reason = "invalid_id"
	ReasonMissingSource          Reason = "missing_source"
	ReasonInvalidSource          Reason = "invalid_source"
	ReasonMissingType            Reason = "missing_type"
	ReasonInvalidType            Reason = "invalid_type"
	ReasonMissingTime            Reason = "missing_time"
	ReasonInvalidTime            Reason = "invalid_time"
	ReasonMissingSchemaVersion   Reason = "missing_schemaversion"
	ReasonInvalidSchemaVersion   Reason = "invalid_schemaversion"
	ReasonMissingResourceType    Reason = "missing_resourcetype"
	ReasonInvalidResourceType    Reason = "invalid_resourcetype"
	ReasonMissingEventType       Reason = "missing_eventtype"
	ReasonInvalidEventType       Reason = "invalid_eventtype"
	ReasonMissingTenantID        Reason = "missing_tenantid"
	ReasonInvalidTenantID        Reason = "invalid_tenantid"
	ReasonInvalidSystemEvent     Reason = "invalid_systemevent"
	ReasonInvalidSubject         Reason = "invalid_subject"
	ReasonInvalidDataContentType Reason = "invalid_datacontenttype"
	ReasonInvalidDataSchema      Reason = "invalid_dataschema"
	ReasonInvalidTraceParent     Reason = "invalid_traceparent"
	ReasonInvalidTraceState      Reason = "invalid_tracestate"
)

const (
	// ReasonPayloadTooLarge is rule 4: the value exceeds the maximum size.
	ReasonPayloadTooLarge Reason = "payload_too_large"
	// ReasonUnknownTenant is rule 5: the tenant is not in the roster.
	ReasonUnknownTenant Reason = "unknown_tenant"
	// ReasonInactiveTenant is rule 6: the tenant is in the roster but not active.
	ReasonInactiveTenant Reason = "inactive_tenant"
	// ReasonDuplicate is rule 7: the inbox already holds (tenant, id).
	ReasonDuplicate Reason = "duplicate"
)

// Verdict is the outcome of the rules for one record. Accepted records have
// Kind Accept and an empty Reason; Detail is a short human explanation for
// operators (stored with quarantined records), always valid UTF-8.
type Verdict struct {
	Kind   Kind
	Reason Reason
	Detail string
}

// String renders the verdict for logs, e.g. "quarantine invalid_id: ...".
func (v Verdict) String() string {
	if v.Reason == "" {
		return string(v.Kind)
	}
	return string(v.Kind) + " " + string(v.Reason) + ": " + v.Detail
}

func quarantine(reason Reason, detail string) Verdict {
	return Verdict{Kind: Quarantine, Reason: reason, Detail: detail}
}
