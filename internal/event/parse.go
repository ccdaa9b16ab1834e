package event

import (
	"bytes"
	"strconv"
	"strings"
)

// attr names one attribute of the SPEC §1.1 table. The constants are in the
// table's order, which is the order rule 3 walks them in.
type attr uint8

const (
	attrSpecVersion attr = iota
	attrID
	attrSource
	attrType
	attrTime
	attrSchemaVersion
	attrResourceType
	attrEventType
	attrTenantID
	attrSystemEvent
	attrSubject
	attrDataContentType
	attrDataSchema
	attrTraceParent
	attrTraceState
	attrCount
)

var attrNames = [attrCount]string{
	attrSpecVersion:     "specversion",
	attrID:              "id",
	attrSource:          "source",
	attrType:            "type",
	attrTime:            "time",
	attrSchemaVersion:   "schemaversion",
	attrResourceType:    "resourcetype",
	attrEventType:       "eventtype",
	attrTenantID:        "tenantid",
	attrSystemEvent:     "systemevent",
	attrSubject:         "subject",
	attrDataContentType: "datacontenttype",
	attrDataSchema:      "dataschema",
	attrTraceParent:     "traceparent",
	attrTraceState:      "tracestate",
}

// missingReasons is empty for the optional attributes: only required ones
// can be missing. tenantid is required here because system events, the only
// ones allowed without it, never reach rule 3.
var missingReasons = [attrCount]Reason{
	attrSpecVersion:   ReasonMissingSpecVersion,
	attrID:            ReasonMissingID,
	attrSource:        ReasonMissingSource,
	attrType:          ReasonMissingType,
	attrTime:          ReasonMissingTime,
	attrSchemaVersion: ReasonMissingSchemaVersion,
	attrResourceType:  ReasonMissingResourceType,
	attrEventType:     ReasonMissingEventType,
	attrTenantID:      ReasonMissingTenantID,
}

var invalidReasons = [attrCount]Reason{
	attrSpecVersion:     ReasonInvalidSpecVersion,
	attrID:              ReasonInvalidID,
	attrSource:          ReasonInvalidSource,
	attrType:            ReasonInvalidType,
	attrTime:            ReasonInvalidTime,
	attrSchemaVersion:   ReasonInvalidSchemaVersion,
	attrResourceType:    ReasonInvalidResourceType,
	attrEventType:       ReasonInvalidEventType,
	attrTenantID:        ReasonInvalidTenantID,
	attrSystemEvent:     ReasonInvalidSystemEvent,
	attrSubject:         ReasonInvalidSubject,
	attrDataContentType: ReasonInvalidDataContentType,
	attrDataSchema:      ReasonInvalidDataSchema,
	attrTraceParent:     ReasonInvalidTraceParent,
	attrTraceState:      ReasonInvalidTraceState,
}

const specVersion = "1.0"

// Parse applies the record-local rules 0–4 to one record. When the record
// passes them it returns the event and ok; otherwise the discard or
// quarantine verdict and the zero Event. The roster and duplicate rules
// (5–7) are the caller's next step: see Admit, Duplicate and Decide.
//
// Parse never panics and does no I/O. The event's Data and OtherHeaders
// alias value and headers.
func Parse(headers []Header, value []byte, opts Options) (ev Event, rejected Verdict, ok bool) {
	if v, ok := checkBounds(headers, opts); !ok {
		return Event{}, v, false
	}
	var rec record
	if v, ok := rec.collect(headers); !ok {
		return Event{}, v, false
	}
	// Rule 2 looks at the raw bytes so that the stream of system events,
	// dropped by the million, costs no allocation.
	if string(rec.raw[attrSystemEvent]) == "true" {
		return Event{}, Verdict{Kind: Discard, Reason: ReasonSystemEvent, Detail: "systemevent is true"}, false
	}

	p := parser{text: rec.text(), prefix: opts.typePrefix()}
	for a := range attrCount {
		v := p.text[a]
		if v == "" {
			if reason := missingReasons[a]; reason != "" {
				return Event{}, quarantine(reason, "required attribute "+attrNames[a]+" is missing or empty"), false
			}
			continue
		}
		if problem := p.check(a, v); problem != "" {
			return Event{}, quarantine(invalidReasons[a], problem), false
		}
	}

	if limit := opts.maxEventBytes(); len(value) > limit {
		return Event{}, quarantine(ReasonPayloadTooLarge,
			"value is "+strconv.Itoa(len(value))+" bytes, the limit is "+strconv.Itoa(limit)), false
	}

	rec.trace.apply(&p.ev)
	p.ev.Data = value
	p.ev.OtherHeaders = rec.other
	return p.ev, Verdict{}, true
}

// record is what one pass over the headers finds: the first value of each
// attribute, the header name that carried it (for details), and the headers
// that carry no attribute.
type record struct {
	raw   [attrCount][]byte
	name  [attrCount]string
	seen  [attrCount]bool
	other []Header
	trace plainTrace
}

// collect sorts the headers into attributes and other headers, applying
// rule 1 as it goes.
func (r *record) collect(headers []Header) (Verdict, bool) {
	// Extension attributes are rare on this platform, so their duplicate
	// check gets a map only once a record actually carries one.
	var extensions map[string]int
	for i, h := range headers {
		kind, a, ext := classifyHeader(h.Key)
		switch kind {
		case headerAttribute:
			if !r.seen[a] {
				r.seen[a], r.raw[a], r.name[a] = true, h.Value, h.Key
				continue
			}
			if !bytes.Equal(r.raw[a], h.Value) {
				return duplicateAttribute(attrNames[a], r.name[a], h.Key), false
			}
		case headerExtension:
			r.other = append(r.other, h)
			if extensions == nil {
				extensions = make(map[string]int)
			}
			name := lowerASCII(ext)
			first, repeated := extensions[name]
			if !repeated {
				extensions[name] = i
				continue
			}
			if !bytes.Equal(headers[first].Value, h.Value) {
				return duplicateAttribute(name, headers[first].Key, h.Key), false
			}
		default:
			r.other = append(r.other, h)
			r.trace.note(h)
		}
	}
	return Verdict{}, true
}

func duplicateAttribute(attribute, firstHeader, secondHeader string) Verdict {
	return quarantine(ReasonDuplicateAttribute, "attribute "+quote(attribute)+
		" appears twice with different values (headers "+quote(firstHeader)+" and "+quote(secondHeader)+")")
}

// text converts the attribute values to strings with a single allocation;
// the strings are substrings of one buffer.
func (r *record) text() (t [attrCount]string) {
	size := 0
	for _, v := range r.raw {
		size += len(v)
	}
	if size == 0 {
		return t
	}
	var b strings.Builder
	b.Grow(size)
	for _, v := range r.raw {
		b.Write(v)
	}
	all := b.String()
	offset := 0
	for a, v := range r.raw {
		t[a] = all[offset : offset+len(v)]
		offset += len(v)
	}
	return t
}

type headerKind uint8

const (
	headerPlain headerKind = iota
	headerAttribute
	headerExtension
)

// maxAttrNameLen is the longest attribute name, "datacontenttype".
const maxAttrNameLen = 15

// classifyHeader tells what a header carries. For an extension attribute it
// also returns the attribute's name as written (without the prefix).
func classifyHeader(name string) (kind headerKind, a attr, extension string) {
	if equalFoldASCII(name, "content-type") {
		return headerAttribute, attrDataContentType, ""
	}
	if len(name) < 3 || name[0]|0x20 != 'c' || name[1]|0x20 != 'e' || (name[2] != '-' && name[2] != '_') {
		return headerPlain, 0, ""
	}
	rest := name[3:]
	if a, ok := lookupAttr(rest); ok {
		return headerAttribute, a, ""
	}
	return headerExtension, 0, rest
}

// Header names are folded in ASCII only: attribute names are ASCII, and
// Unicode folding would make distinct names equal (U+212A KELVIN SIGN folds
// to "k"; every invalid UTF-8 byte lowers to U+FFFD).

func equalFoldASCII(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// lookupAttr finds a known attribute by its case-insensitive name.
func lookupAttr(name string) (attr, bool) {
	if len(name) > maxAttrNameLen {
		return 0, false
	}
	var buf [maxAttrNameLen]byte
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	switch string(buf[:len(name)]) {
	case "specversion":
		return attrSpecVersion, true
	case "id":
		return attrID, true
	case "source":
		return attrSource, true
	case "type":
		return attrType, true
	case "time":
		return attrTime, true
	case "schemaversion":
		return attrSchemaVersion, true
	case "resourcetype":
		return attrResourceType, true
	case "eventtype":
		return attrEventType, true
	case "tenantid":
		return attrTenantID, true
	case "systemevent":
		return attrSystemEvent, true
	case "subject":
		return attrSubject, true
	case "datacontenttype":
		return attrDataContentType, true
	case "dataschema":
		return attrDataSchema, true
	case "traceparent":
		return attrTraceParent, true
	case "tracestate":
		return attrTraceState, true
	}
	return 0, false
}

// parser holds the attribute values of one record and the event built from
// them while rule 3 walks the attributes.
type parser struct {
	text   [attrCount]string
	prefix string
	ev     Event
}

// check validates one present attribute and stores it in the event. It
// returns "" when the value is well formed, else a short description of what
// is wrong with it.
func (p *parser) check(a attr, v string) (problem string) {
	switch a {
	case attrSpecVersion:
		if v != specVersion {
			return "specversion " + quote(v) + " is not " + specVersion
		}
		p.ev.SpecVersion = specVersion
	case attrID:
		id, ok := canonicalUUIDv7(v)
		if !ok {
			return "id " + quote(v) + " is not a canonical UUIDv7"
		}
		p.ev.ID = id
	case attrType:
		if problem := p.checkType(v); problem != "" {
			return problem
		}
		p.ev.Type = v
	case attrTime:
		t, ok := parseRFC3339(v)
		if !ok {
			return "time " + quote(v) + " is not an RFC 3339 timestamp"
		}
		p.ev.Time, p.ev.TimeText = t, v
	case attrSchemaVersion:
		major, ok := parseSchemaMajor(v)
		if !ok {
			return "schemaversion " + quote(v) + " is not MAJOR[.MINOR[.PATCH]] with a major up to " + strconv.Itoa(maxSchemaMajor)
		}
		p.ev.SchemaVersion, p.ev.SchemaMajor = v, major
	case attrResourceType, attrEventType:
		// The event's ResourceType and EventType come from checkType: once
		// both segments pass, they are the type's suffix.
		if !isSegment(v) {
			return attrNames[a] + " " + quote(v) + " does not match [a-z0-9][a-z0-9_-]*"
		}
	case attrTenantID:
		if !isTenantID(v) {
			return "tenantid " + quote(v) + " does not match [A-Za-z0-9][A-Za-z0-9._-]{0,127}"
		}
		p.ev.TenantID = v
	case attrSystemEvent:
		// "true" never gets here: rule 2 discarded it.
		if v != "false" {
			return "systemevent " + quote(v) + " is neither true nor false"
		}
	default:
		// source and the optional attributes: any CloudEvents String.
		if !isCEString(v) {
			return attrNames[a] + " " + quote(v) + " is not a valid CloudEvents string"
		}
		p.setString(a, v)
	}
	return ""
}

func (p *parser) setString(a attr, v string) {
	switch a {
	case attrSource:
		p.ev.Source = v
	case attrSubject:
		p.ev.Subject = v
	case attrDataContentType:
		p.ev.DataContentType = v
	case attrDataSchema:
		p.ev.DataSchema = v
	case attrTraceParent:
		p.ev.TraceParent = v
	case attrTraceState:
		p.ev.TraceState = v
	}
}

// checkType validates the type against the prefix and, when both segments
// are well formed, against them, filling in the event key. A malformed or
// missing segment is left for its own step of the walk so that it is reported
// under its own name; the record is then rejected before the key is needed.
func (p *parser) checkType(typ string) (problem string) {
	if !isCEString(typ) {
		return "type " + quote(typ) + " is not a valid CloudEvents string"
	}
	if !strings.HasPrefix(typ, p.prefix) {
		return "type " + quote(typ) + " does not start with " + quote(p.prefix)
	}
	rt, et := p.text[attrResourceType], p.text[attrEventType]
	if !isSegment(rt) || !isSegment(et) {
		return ""
	}
	key, ok := eventKey(typ, p.prefix, rt, et)
	if !ok {
		return "type " + quote(typ) + " does not end with " + quote("."+rt+"."+et) + " after the prefix"
	}
	// The key and its segments share the type's bytes.
	p.ev.Key, p.ev.ResourceType, p.ev.EventType = key, key[:len(rt)], key[len(rt)+1:]
	return ""
}

// eventKey returns the "<rt>.<et>" that typ ends with, as a substring of typ.
// The dot before rt must lie after the prefix, or be the prefix's own last
// byte: "studio.lerian." + "transaction.posted" is the common form.
func eventKey(typ, prefix, rt, et string) (string, bool) {
	dot := len(typ) - len(rt) - len(et) - 2
	if dot < 0 || dot < len(prefix)-1 || typ[dot] != '.' {
		return "", false
	}
	key := typ[dot+1:]
	if key[:len(rt)] != rt || key[len(rt)] != '.' || key[len(rt)+1:] != et {
		return "", false
	}
	return key, true
}

// maxQuoted bounds how much of a bad value a detail repeats: the whole
// record is quarantined anyway, the detail only has to point at the problem.
const maxQuoted = 64

// quote renders a value for a detail: Go-quoted, so any bytes come out as
// valid UTF-8 without control characters, and truncated when long.
func quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:maxQuoted]) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}
