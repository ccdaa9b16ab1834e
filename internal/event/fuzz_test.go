package event

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hubctl/hubctl/internal/conformance"
)

// The reference below restates the attribute and verdict rules (docs/concepts.md, Events and Verdicts) (and the package's documented
// decisions) the plain way: regular expressions, maps and the standard
// library's Unicode tables. The fuzzer holds Parse to it.

var (
	refUUIDv7      = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-7[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$`)
	refLowerUUIDv7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	refSegment     = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	refTenant      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	refSchema      = regexp.MustCompile(`^([0-9]+)(\.[0-9]+){0,2}$`)
	refTime        = regexp.MustCompile(`^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|([+-])([0-9]{2}):([0-9]{2}))$`)
)

// knownReasons are the codes a verdict may carry, spelled out rather than
// taken from the package's constants.
var knownReasons = map[string]Kind{
	"duplicate_attribute": Quarantine, "system_event": Discard,
	"missing_specversion": Quarantine, "invalid_specversion": Quarantine,
	"missing_id": Quarantine, "invalid_id": Quarantine,
	"missing_source": Quarantine, "invalid_source": Quarantine,
	"missing_type": Quarantine, "invalid_type": Quarantine,
	"missing_time": Quarantine, "invalid_time": Quarantine,
	"missing_schemaversion": Quarantine, "invalid_schemaversion": Quarantine,
	"missing_resourcetype": Quarantine, "invalid_resourcetype": Quarantine,
	"missing_eventtype": Quarantine, "invalid_eventtype": Quarantine,
	"missing_tenantid": Quarantine, "invalid_tenantid": Quarantine,
	"invalid_systemevent": Quarantine, "invalid_subject": Quarantine,
	"invalid_datacontenttype": Quarantine, "invalid_dataschema": Quarantine,
	"invalid_traceparent": Quarantine, "invalid_tracestate": Quarantine,
	"payload_too_large": Quarantine, "unknown_tenant": Discard,
	"inactive_tenant": Discard, "duplicate": Discard,
	"headers_too_large": Quarantine, "attribute_too_large": Quarantine,
}

func kindOf(r Reason) Kind { return knownReasons[string(r)] }

var refAttributeNames = []string{
	"specversion", "id", "source", "type", "time", "schemaversion", "resourcetype",
	"eventtype", "tenantid", "systemevent", "subject", "datacontenttype", "dataschema",
	"traceparent", "tracestate",
}

func refLower(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// refAttributes maps attribute names to values; conflict reports rule 1.
// others counts the headers that carry no CloudEvents attribute of the table.
func refAttributes(headers []Header) (attrs map[string]string, conflict bool, others int) {
	attrs = make(map[string]string)
	for _, h := range headers {
		name := refLower(h.Key)
		switch {
		case name == "content-type":
			name = "datacontenttype"
		case strings.HasPrefix(name, "ce-"), strings.HasPrefix(name, "ce_"):
			name = name[3:]
		default:
			others++
			continue
		}
		if !contains(refAttributeNames, name) {
			others++
			name = "extension:" + name
		}
		if prev, seen := attrs[name]; seen && prev != string(h.Value) {
			return nil, true, 0
		}
		attrs[name] = string(h.Value)
	}
	return attrs, false, others
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func refCEString(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Noncharacter_Code_Point, r) {
			return false
		}
	}
	return true
}

func refParseTime(s string) (time.Time, bool) {
	m := refTime.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, false
	}
	n := make([]int, 7)
	for i := 1; i <= 6; i++ {
		n[i], _ = strconv.Atoi(m[i])
	}
	// A leap second is the last nanosecond of 23:59 UTC, the only minute
	// RFC 3339 lets it end.
	leap := n[6] == 60
	if leap {
		n[6] = 59
	}
	t := time.Date(n[1], time.Month(n[2]), n[3], n[4], n[5], n[6], 0, time.UTC)
	// time.Date normalizes out-of-range fields; a changed field means it was invalid.
	if t.Year() != n[1] || int(t.Month()) != n[2] || t.Day() != n[3] || t.Hour() != n[4] || t.Minute() != n[5] || t.Second() != n[6] {
		return time.Time{}, false
	}
	if leap {
		t = t.Add(999_999_999)
	} else if frac := m[7]; frac != "" {
		nanos, _ := strconv.Atoi((frac[1:] + "000000000")[:9])
		t = t.Add(time.Duration(nanos))
	}
	if m[9] != "" {
		hh, _ := strconv.Atoi(m[10])
		mm, _ := strconv.Atoi(m[11])
		if hh > 23 || mm > 59 {
			return time.Time{}, false
		}
		offset := time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute
		if m[9] == "-" {
			offset = -offset
		}
		t = t.Add(-offset)
	}
	if leap && (t.Hour() != 23 || t.Minute() != 59) {
		return time.Time{}, false
	}
	return t, true
}

func refSchemaMajor(s string) (int64, bool) {
	m := refSchema.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	major, err := strconv.ParseInt(m[1], 10, 64)
	return major, err == nil && major <= math.MaxInt32
}

// refBounds is rule 0: header count, then header bytes, then the first
// attribute header (ce-/ce_ prefixed, or content-type) over its limit.
func refBounds(headers []Header, opts Options) Reason {
	maxCount, maxHeaderBytes, maxAttr := opts.MaxHeaderCount, opts.MaxHeaderBytes, opts.MaxAttributeBytes
	if maxCount <= 0 {
		maxCount = 64
	}
	if maxHeaderBytes <= 0 {
		maxHeaderBytes = 65536
	}
	if maxAttr <= 0 {
		maxAttr = 4096
	}
	if len(headers) > maxCount {
		return "headers_too_large"
	}
	total := 0
	for _, h := range headers {
		total += len(h.Key) + len(h.Value)
	}
	if total > maxHeaderBytes {
		return "headers_too_large"
	}
	for _, h := range headers {
		name := refLower(h.Key)
		attribute := name == "content-type" || strings.HasPrefix(name, "ce-") || strings.HasPrefix(name, "ce_")
		if attribute && len(h.Value) > maxAttr {
			return "attribute_too_large"
		}
	}
	return ""
}

func refOptions(opts Options) (prefix string, maxBytes int) {
	prefix, maxBytes = opts.TypePrefix, opts.MaxEventBytes
	if prefix == "" {
		prefix = "studio.lerian."
	}
	if maxBytes <= 0 {
		maxBytes = 1048576
	}
	return prefix, maxBytes
}

// refTypeMatches says whether typ ends with .<rt>.<et> after the prefix (the
// dot may be the prefix's own last byte).
func refTypeMatches(typ, prefix, rt, et string) bool {
	rest := strings.TrimPrefix(typ, prefix)
	if strings.HasSuffix(prefix, ".") {
		rest = "." + rest
	}
	return strings.HasSuffix(rest, "."+rt+"."+et)
}

// referenceReason is the reason rules 1–4 give the record, "" when it passes.
func referenceReason(headers []Header, value []byte, opts Options) Reason {
	prefix, maxBytes := refOptions(opts)
	if r := refBounds(headers, opts); r != "" {
		return r
	}
	attrs, conflict, _ := refAttributes(headers)
	if conflict {
		return "duplicate_attribute"
	}
	if attrs["systemevent"] == "true" {
		return "system_event"
	}
	validType := func(v string) bool {
		if !refCEString(v) || !strings.HasPrefix(v, prefix) {
			return false
		}
		rt, et := attrs["resourcetype"], attrs["eventtype"]
		return !refSegment.MatchString(rt) || !refSegment.MatchString(et) || refTypeMatches(v, prefix, rt, et)
	}
	steps := []struct {
		name     string
		required bool
		valid    func(string) bool
	}{
		{"specversion", true, func(v string) bool { return v == "1.0" }},
		{"id", true, refUUIDv7.MatchString},
		{"source", true, refCEString},
		{"type", true, validType},
		{"time", true, func(v string) bool { _, ok := refParseTime(v); return ok }},
		{"schemaversion", true, func(v string) bool { _, ok := refSchemaMajor(v); return ok }},
		{"resourcetype", true, refSegment.MatchString},
		{"eventtype", true, refSegment.MatchString},
		{"tenantid", true, refTenant.MatchString},
		{"systemevent", false, func(v string) bool { return v == "false" }},
		{"subject", false, refCEString},
		{"datacontenttype", false, refCEString},
		{"dataschema", false, refCEString},
		{"traceparent", false, refCEString},
		{"tracestate", false, refCEString},
	}
	for _, step := range steps {
		v := attrs[step.name]
		switch {
		case v == "" && step.required:
			return Reason("missing_" + step.name)
		case v != "" && !step.valid(v):
			return Reason("invalid_" + step.name)
		}
	}
	if len(value) > maxBytes {
		return "payload_too_large"
	}
	return ""
}

// checkAccepted verifies every attribute rule on an accepted event directly.
func checkAccepted(t *testing.T, ev Event, headers []Header, value []byte, opts Options) {
	t.Helper()
	prefix, maxBytes := refOptions(opts)
	attrs, _, others := refAttributes(headers)
	if ev.SpecVersion != "1.0" {
		t.Errorf("SpecVersion %q", ev.SpecVersion)
	}
	if !refLowerUUIDv7.MatchString(ev.ID) || !strings.EqualFold(ev.ID, attrs["id"]) {
		t.Errorf("ID %q from %q", ev.ID, attrs["id"])
	}
	if ev.Source == "" || !refCEString(ev.Source) {
		t.Errorf("Source %q", ev.Source)
	}
	if !refSegment.MatchString(ev.ResourceType) || !refSegment.MatchString(ev.EventType) ||
		ev.ResourceType != attrs["resourcetype"] || ev.EventType != attrs["eventtype"] {
		t.Errorf("segments %q, %q", ev.ResourceType, ev.EventType)
	}
	if ev.Key != ev.ResourceType+"."+ev.EventType {
		t.Errorf("Key %q", ev.Key)
	}
	if !strings.HasPrefix(ev.Type, prefix) || !refTypeMatches(ev.Type, prefix, ev.ResourceType, ev.EventType) {
		t.Errorf("Type %q with prefix %q and key %q", ev.Type, prefix, ev.Key)
	}
	if want, ok := refParseTime(ev.TimeText); !ok || !ev.Time.Equal(want) || ev.Time.Location() != time.UTC {
		t.Errorf("Time %v from %q", ev.Time, ev.TimeText)
	}
	if major, ok := refSchemaMajor(ev.SchemaVersion); !ok || int64(ev.SchemaMajor) != major {
		t.Errorf("SchemaMajor %d from %q", ev.SchemaMajor, ev.SchemaVersion)
	}
	if !refTenant.MatchString(ev.TenantID) {
		t.Errorf("TenantID %q", ev.TenantID)
	}
	if attrs["systemevent"] == "true" {
		t.Error("a system event was accepted")
	}
	for name, got := range map[string]string{
		"source": ev.Source, "type": ev.Type, "time": ev.TimeText, "schemaversion": ev.SchemaVersion,
		"tenantid": ev.TenantID, "subject": ev.Subject, "datacontenttype": ev.DataContentType,
		"dataschema": ev.DataSchema, "traceparent": ev.TraceParent, "tracestate": ev.TraceState,
	} {
		want := attrs[name]
		if name == "traceparent" || name == "tracestate" {
			want = refTraceContext(headers, attrs)[name]
		}
		if got != want || (got != "" && !refCEString(got)) {
			t.Errorf("%s = %q, headers say %q", name, got, want)
		}
	}
	if len(value) > maxBytes || !bytes.Equal(ev.Data, value) {
		t.Errorf("Data of %d bytes, value of %d, limit %d", len(ev.Data), len(value), maxBytes)
	}
	if len(ev.OtherHeaders) != others {
		t.Errorf("%d other headers, want %d", len(ev.OtherHeaders), others)
	}
}

// decodeFuzzHeaders reads one header per line, name and value split at the
// first '='; a line without '=' is a header with a nil value.
func decodeFuzzHeaders(text string) []Header {
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	headers := make([]Header, len(lines))
	for i, line := range lines {
		name, value, found := strings.Cut(line, "=")
		headers[i].Key = name
		if found {
			headers[i].Value = []byte(value)
		}
	}
	return headers
}

func encodeFuzzHeaders(headers []Header) string {
	lines := make([]string, len(headers))
	for i, h := range headers {
		lines[i] = h.Key + "=" + string(h.Value)
	}
	return strings.Join(lines, "\n")
}

// FuzzParse holds Parse to the reference on arbitrary records and bounds:
// it never panics, gives exactly the reference's reason, and every accepted
// event satisfies the attribute rules of docs/concepts.md, Events. The corpus starts from every conformance vector
// plus testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	vectors, err := conformance.LoadIngestVerdicts()
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range vectors.Cases {
		headers, value := recordOf(c)
		limit := uint16(0)
		if c.Repeat != nil {
			// Keep the seed small: the same rule with a small limit.
			value, limit = value[:17], 16
		}
		f.Add(encodeFuzzHeaders(headers), value, limit, "", uint8(0), uint16(0), uint16(0))
		// The same record against small bounds, so the fuzzer starts near
		// each of rule 0's edges.
		f.Add(encodeFuzzHeaders(headers), value, limit, "", uint8(len(headers)), uint16(256), uint16(36))
	}
	f.Fuzz(func(t *testing.T, headerText string, value []byte, limit uint16, prefix string,
		maxHeaders uint8, maxHeaderBytes, maxAttributeBytes uint16) {
		headers := decodeFuzzHeaders(headerText)
		opts := Options{TypePrefix: prefix, MaxEventBytes: int(limit),
			MaxHeaderCount: int(maxHeaders), MaxHeaderBytes: int(maxHeaderBytes), MaxAttributeBytes: int(maxAttributeBytes)}
		ev, v, ok := Parse(headers, value, opts)

		if want := referenceReason(headers, value, opts); v.Reason != want {
			t.Fatalf("reason %q, reference says %q (verdict %s)", v.Reason, want, v)
		}
		if ok {
			checkAccepted(t, ev, headers, value, opts)
			checkHeadersRestore(t, ev, headers)
			return
		}
		wantKind, known := knownReasons[string(v.Reason)]
		if !known || v.Kind != wantKind {
			t.Fatalf("verdict %s: unknown reason or wrong kind", v)
		}
		if v.Detail == "" || !utf8.ValidString(v.Detail) || strings.ContainsRune(v.Detail, 0) {
			t.Fatalf("detail %q is empty or not printable", v.Detail)
		}
	})
}

var refTraceParent = regexp.MustCompile(`^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$`)

// refTraceContext is the trace context the rules give an accepted record:
// the CloudEvents attributes, or else the first plain traceparent header
// when it is valid W3C, with the first plain tracestate when that is a
// CloudEvents string of at most 512 bytes.
func refTraceContext(headers []Header, attrs map[string]string) map[string]string {
	if attrs["traceparent"] != "" {
		return map[string]string{"traceparent": attrs["traceparent"], "tracestate": attrs["tracestate"]}
	}
	plain := map[string]string{}
	for _, h := range headers {
		name := refLower(h.Key)
		if name != "traceparent" && name != "tracestate" {
			continue
		}
		if _, seen := plain[name]; !seen {
			plain[name] = string(h.Value)
		}
	}
	tp := plain["traceparent"]
	valid := refTraceParent.MatchString(tp) && tp[:2] != "ff" && (tp[:2] != "00" || len(tp) == 55) &&
		strings.Trim(tp[3:35], "0") != "" && strings.Trim(tp[36:52], "0") != ""
	if !valid {
		return map[string]string{"traceparent": "", "tracestate": attrs["tracestate"]}
	}
	ts := plain["tracestate"]
	if ts == "" || len(ts) > 512 || !refCEString(ts) {
		ts = ""
	}
	return map[string]string{"traceparent": tp, "tracestate": ts}
}

// checkHeadersRestore: the inbox's references to the columns give back every
// header of an accepted record byte for byte.
func checkHeadersRestore(t *testing.T, ev Event, headers []Header) {
	t.Helper()
	s := ev.Stored()
	mask := DerivedHeaders(s, headers)
	for i, h := range headers {
		stored := h.Value
		if mask&(1<<min(i, 63)) != 0 && i < MaxDerivedHeaders {
			stored = nil
		}
		if got := RestoreHeader(s, mask, i, h.Key, stored); string(got) != string(h.Value) || (got == nil) != (h.Value == nil) {
			t.Fatalf("header %d %q restored as %q, was %q", i, h.Key, got, h.Value)
		}
	}
}
