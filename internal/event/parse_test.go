package event

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	validID     = "0190b6a2-7c1e-7d3a-9f00-123456789abc"
	validTime   = "2026-11-29T12:00:00.123456Z"
	validTenant = "t-active"
)

// validRecord returns the headers of a record every rule accepts, as ce-
// headers in the order of the SPEC §1.1 table.
func validRecord() []Header {
	return headersOf(
		"ce-specversion", "1.0",
		"ce-id", validID,
		"ce-source", "midaz",
		"ce-type", "studio.lerian.transaction.posted",
		"ce-time", validTime,
		"ce-schemaversion", "1.0.0",
		"ce-resourcetype", "transaction",
		"ce-eventtype", "posted",
		"ce-tenantid", validTenant,
	)
}

func headersOf(pairs ...string) []Header {
	headers := make([]Header, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		headers = append(headers, Header{Key: pairs[i], Value: []byte(pairs[i+1])})
	}
	return headers
}

// set replaces the value of the header named name, or appends the header.
func set(headers []Header, name, value string) []Header {
	out := append([]Header(nil), headers...)
	for i := range out {
		if out[i].Key == name {
			out[i].Value = []byte(value)
			return out
		}
	}
	return append(out, Header{Key: name, Value: []byte(value)})
}

func add(headers []Header, pairs ...string) []Header {
	return append(append([]Header(nil), headers...), headersOf(pairs...)...)
}

func without(headers []Header, name string) []Header {
	var out []Header
	for _, h := range headers {
		if h.Key != name {
			out = append(out, h)
		}
	}
	return out
}

// TestParseFullEvent pins every field of an event carrying every attribute.
func TestParseFullEvent(t *testing.T) {
	headers := headersOf(
		"ce_specversion", "1.0",
		"CE-ID", "0190B6A2-7C1E-7D3A-9F00-123456789ABC",
		"ce-source", "midaz",
		"ce-type", "studio.lerian.midaz.balance.config-changed",
		"ce-time", "2026-11-29T09:00:00.5-03:00",
		"ce-schemaversion", "2.1.0",
		"ce-resourcetype", "balance",
		"ce-eventtype", "config-changed",
		"ce-tenantid", "Tenant_1.a-b",
		"ce-systemevent", "false",
		"ce-subject", "acc-1",
		"content-type", "application/json",
		"ce-dataschema", "https://schemas.example/balance.json",
		"ce-traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"ce-tracestate", "vendor=1",
		"traceparent", "00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbb-01",
		"ce-partitionkey", "p-7",
	)
	value := []byte(`{"amount":1000}`)

	ev, v, ok := Parse(headers, value, Options{})
	if !ok {
		t.Fatalf("rejected: %s", v)
	}
	want := Event{
		ID:              "0190b6a2-7c1e-7d3a-9f00-123456789abc",
		Source:          "midaz",
		Type:            "studio.lerian.midaz.balance.config-changed",
		SpecVersion:     "1.0",
		Time:            time.Date(2026, 11, 29, 12, 0, 0, 500_000_000, time.UTC),
		TimeText:        "2026-11-29T09:00:00.5-03:00",
		SchemaVersion:   "2.1.0",
		SchemaMajor:     2,
		ResourceType:    "balance",
		EventType:       "config-changed",
		Key:             "balance.config-changed",
		TenantID:        "Tenant_1.a-b",
		Subject:         "acc-1",
		DataContentType: "application/json",
		DataSchema:      "https://schemas.example/balance.json",
		TraceParent:     "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		TraceState:      "vendor=1",
		Data:            value,
		OtherHeaders:    []Header{headers[15], headers[16]},
	}
	if !reflect.DeepEqual(ev, want) {
		t.Errorf("event\n got %+v\nwant %+v", ev, want)
	}
}

// TestParseRules covers what the conformance vectors leave open.
func TestParseRules(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		name    string
		headers []Header
		value   string
		opts    Options
		want    Reason // "" means Parse accepts
		check   func(t *testing.T, ev Event)
	}{
		// Rule 0: bounds, before everything else.
		{name: "headers at the count limit", headers: validRecord(), opts: Options{MaxHeaderCount: 9}},
		{name: "one header over the count limit", headers: validRecord(), opts: Options{MaxHeaderCount: 8}, want: ReasonHeadersTooLarge},
		{name: "10,000 extension headers", headers: manyExtensions(validRecord(), 10_000), want: ReasonHeadersTooLarge},
		{name: "headers over the byte limit", headers: add(validRecord(), "x-pad", long(DefaultMaxHeaderBytes)), want: ReasonHeadersTooLarge},
		{name: "header bytes count names too", headers: validRecord(), opts: Options{MaxHeaderBytes: headerBytes(validRecord()) - 1}, want: ReasonHeadersTooLarge},
		{name: "header bytes at the limit", headers: validRecord(), opts: Options{MaxHeaderBytes: headerBytes(validRecord())}},
		{name: "1 MiB source", headers: set(validRecord(), "ce-source", long(1<<20)), opts: Options{MaxHeaderBytes: 4 << 20}, want: ReasonAttributeTooLarge},
		{name: "2 MiB subject", headers: add(validRecord(), "ce-subject", long(2<<20)), opts: Options{MaxHeaderBytes: 4 << 20}, want: ReasonAttributeTooLarge},
		{name: "attribute at its limit", headers: add(validRecord(), "ce-subject", long(DefaultMaxAttributeBytes))},
		{name: "attribute over its limit", headers: add(validRecord(), "ce-subject", long(DefaultMaxAttributeBytes+1)), want: ReasonAttributeTooLarge},
		{name: "extension over the attribute limit", headers: add(validRecord(), "ce_myext", long(65)), opts: Options{MaxAttributeBytes: 64}, want: ReasonAttributeTooLarge},
		{name: "content-type over the attribute limit", headers: add(validRecord(), "Content-Type", long(65)), opts: Options{MaxAttributeBytes: 64}, want: ReasonAttributeTooLarge},
		{name: "plain header is bounded by header bytes only", headers: add(validRecord(), "x-trace", long(65)), opts: Options{MaxAttributeBytes: 64}},
		{name: "bounds beat a duplicate attribute", headers: add(validRecord(), "ce_source", long(65)), opts: Options{MaxAttributeBytes: 64}, want: ReasonAttributeTooLarge},
		{name: "bounds beat a system event", headers: manyExtensions(add(validRecord(), "ce-systemevent", "true"), 100), want: ReasonHeadersTooLarge},

		// Rule 1 and header naming.
		{name: "duplicate with an empty value", headers: add(validRecord(), "ce_source", ""), want: ReasonDuplicateAttribute},
		{name: "duplicate differing only in case of the value", headers: add(validRecord(), "CE_SOURCE", "Midaz"), want: ReasonDuplicateAttribute},
		{name: "duplicate beats system event", headers: add(validRecord(), "ce-systemevent", "true", "ce-source", "other"), want: ReasonDuplicateAttribute},
		{name: "duplicate beats a missing attribute", headers: add(without(validRecord(), "ce-id"), "ce-source", "other"), want: ReasonDuplicateAttribute},
		{name: "same attribute three times with equal values", headers: add(validRecord(), "ce_tenantid", validTenant, "CE-TENANTID", validTenant)},
		{name: "content-type agrees with ce-datacontenttype", headers: add(validRecord(), "ce-datacontenttype", "application/json", "Content-Type", "application/json"),
			check: func(t *testing.T, ev Event) { wantField(t, "DataContentType", ev.DataContentType, "application/json") }},
		{name: "content-type disagrees with ce-datacontenttype", headers: add(validRecord(), "ce-datacontenttype", "application/json", "content-type", "text/plain"), want: ReasonDuplicateAttribute},
		{name: "content-type alone supplies datacontenttype", headers: add(validRecord(), "CONTENT-TYPE", "application/avro"),
			check: func(t *testing.T, ev Event) { wantField(t, "DataContentType", ev.DataContentType, "application/avro") }},
		{name: "extension attribute repeated with different values", headers: add(validRecord(), "ce-partitionkey", "a", "CE_PartitionKey", "b"), want: ReasonDuplicateAttribute},
		{name: "extension attribute repeated with equal values", headers: add(validRecord(), "ce-partitionkey", "a", "ce_partitionkey", "a"),
			check: func(t *testing.T, ev Event) { wantField(t, "len(OtherHeaders)", len(ev.OtherHeaders), 2) }},
		{name: "plain header repeated is no attribute", headers: add(validRecord(), "x-retry", "1", "x-retry", "2")},
		{name: "plain traceparent is kept and is the trace context", headers: add(validRecord(), "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
			check: func(t *testing.T, ev Event) {
				wantField(t, "TraceParent", ev.TraceParent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
				wantField(t, "OtherHeaders[0].Key", ev.OtherHeaders[0].Key, "traceparent")
			}},
		{name: "prefix with another separator is a plain header", headers: add(without(validRecord(), "ce-id"), "ce.id", validID), want: ReasonMissingID},
		{name: "bare prefix is an extension", headers: add(validRecord(), "ce-", "x")},

		// Rule 2 and systemevent.
		{name: "system event skips every other rule", headers: headersOf("ce-systemevent", "true"), value: long(10), opts: Options{MaxEventBytes: 1}, want: ReasonSystemEvent},
		{name: "system event through ce_", headers: add(validRecord(), "ce_systemevent", "true"), want: ReasonSystemEvent},
		{name: "systemevent false is a tenant event", headers: add(validRecord(), "ce-systemevent", "false")},
		{name: "systemevent empty is absent", headers: add(validRecord(), "ce-systemevent", "")},
		{name: "systemevent in capitals is invalid", headers: add(validRecord(), "ce-systemevent", "TRUE"), want: ReasonInvalidSystemEvent},
		{name: "systemevent garbage loses to a missing tenant", headers: add(without(validRecord(), "ce-tenantid"), "ce-systemevent", "yes"), want: ReasonMissingTenantID},

		// Rule 3: specversion, id, source.
		{name: "specversion with a space", headers: set(validRecord(), "ce-specversion", "1.0 "), want: ReasonInvalidSpecVersion},
		{name: "id lowercased", headers: set(validRecord(), "ce-id", "0190B6A2-7C1E-7D3A-BF00-123456789ABC"),
			check: func(t *testing.T, ev Event) { wantField(t, "ID", ev.ID, "0190b6a2-7c1e-7d3a-bf00-123456789abc") }},
		{name: "id variant 110x", headers: set(validRecord(), "ce-id", "0190b6a2-7c1e-7d3a-cf00-123456789abc"), want: ReasonInvalidID},
		{name: "id in braces", headers: set(validRecord(), "ce-id", "{"+validID+"}"), want: ReasonInvalidID},
		{name: "id with a non-hex digit", headers: set(validRecord(), "ce-id", "0190b6a2-7c1e-7d3a-9f00-123456789abg"), want: ReasonInvalidID},
		{name: "id with hyphens misplaced", headers: set(validRecord(), "ce-id", "0190b6a27-c1e-7d3a-9f00-123456789abc"), want: ReasonInvalidID},
		{name: "source with a NUL byte", headers: set(validRecord(), "ce-source", "mid\x00az"), want: ReasonInvalidSource},
		{name: "source with invalid UTF-8", headers: set(validRecord(), "ce-source", "mid\xffaz"), want: ReasonInvalidSource},
		{name: "source with a C1 control", headers: set(validRecord(), "ce-source", "mid\u0085az"), want: ReasonInvalidSource},
		{name: "source with a noncharacter", headers: set(validRecord(), "ce-source", "midaz\uFFFE"), want: ReasonInvalidSource},
		{name: "source in Unicode", headers: set(validRecord(), "ce-source", "//sistema/cobrança"),
			check: func(t *testing.T, ev Event) { wantField(t, "Source", ev.Source, "//sistema/cobrança") }},

		// Rule 3: type.
		{name: "type equal to the prefix", headers: set(validRecord(), "ce-type", "studio.lerian."), want: ReasonInvalidType},
		{name: "type segments overlapping the prefix", headers: set(set(set(validRecord(),
			"ce-type", "studio.lerian.posted"), "ce-resourcetype", "lerian"), "ce-eventtype", "posted"), want: ReasonInvalidType},
		{name: "type missing the dot before the resource", headers: set(validRecord(), "ce-type", "studio.lerian.xtransaction.posted"), want: ReasonInvalidType},
		{name: "type with a control character", headers: set(validRecord(), "ce-type", "studio.lerian.\ttransaction.posted"), want: ReasonInvalidType},
		{name: "type against an invalid resourcetype reports the resourcetype", headers: set(set(validRecord(),
			"ce-type", "studio.lerian.Transaction.posted"), "ce-resourcetype", "Transaction"), want: ReasonInvalidResourceType},
		{name: "type against a missing eventtype reports the eventtype", headers: without(set(validRecord(),
			"ce-type", "studio.lerian.whatever"), "ce-eventtype"), want: ReasonMissingEventType},
		{name: "wrong prefix beats a missing resourcetype", headers: without(set(validRecord(),
			"ce-type", "com.example.transaction.posted"), "ce-resourcetype"), want: ReasonInvalidType},
		{name: "custom prefix without a trailing dot", headers: set(validRecord(), "ce-type", "acme.transaction.posted"), opts: Options{TypePrefix: "acme"},
			check: func(t *testing.T, ev Event) { wantField(t, "Key", ev.Key, "transaction.posted") }},
		{name: "custom prefix without a trailing dot needs a dot after it", headers: set(validRecord(), "ce-type", "acmetransaction.posted"), opts: Options{TypePrefix: "acme"}, want: ReasonInvalidType},
		{name: "default prefix rejected under a custom prefix", headers: validRecord(), opts: Options{TypePrefix: "acme."}, want: ReasonInvalidType},

		// Rule 3: time.
		{name: "time without fraction", headers: set(validRecord(), "ce-time", "2026-11-29T12:00:00Z"),
			check: func(t *testing.T, ev Event) { wantTime(t, ev, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)) }},
		{name: "time in lowercase", headers: set(validRecord(), "ce-time", "2026-11-29t12:00:00z"),
			check: func(t *testing.T, ev Event) { wantTime(t, ev, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)) }},
		{name: "time fraction beyond nanoseconds is truncated", headers: set(validRecord(), "ce-time", "2026-11-29T12:00:00.1234567899+00:00"),
			check: func(t *testing.T, ev Event) { wantTime(t, ev, time.Date(2026, 11, 29, 12, 0, 0, 123456789, time.UTC)) }},
		{name: "time offset crossing midnight", headers: set(validRecord(), "ce-time", "2026-12-31T23:30:00-05:45"),
			check: func(t *testing.T, ev Event) { wantTime(t, ev, time.Date(2027, 1, 1, 5, 15, 0, 0, time.UTC)) }},
		{name: "time on a leap day", headers: set(validRecord(), "ce-time", "2024-02-29T00:00:00Z")},
		{name: "time on a missing leap day", headers: set(validRecord(), "ce-time", "2026-02-29T00:00:00Z"), want: ReasonInvalidTime},
		{name: "time on 1900-02-29", headers: set(validRecord(), "ce-time", "1900-02-29T00:00:00Z"), want: ReasonInvalidTime},
		{name: "time on 2000-02-29", headers: set(validRecord(), "ce-time", "2000-02-29T00:00:00Z")},
		{name: "time with a leap second", headers: set(validRecord(), "ce-time", "2016-12-31T23:59:60Z"),
			check: func(t *testing.T, ev Event) {
				wantTime(t, ev, time.Date(2016, 12, 31, 23, 59, 59, 999_999_999, time.UTC))
				wantField(t, "TimeText", ev.TimeText, "2016-12-31T23:59:60Z")
			}},
		{name: "time with a leap second and a fraction", headers: set(validRecord(), "ce-time", "2016-12-31T23:59:60.5Z"),
			check: func(t *testing.T, ev Event) {
				wantTime(t, ev, time.Date(2016, 12, 31, 23, 59, 59, 999_999_999, time.UTC))
			}},
		{name: "time with a leap second in an offset", headers: set(validRecord(), "ce-time", "1990-12-31T15:59:60-08:00"),
			check: func(t *testing.T, ev Event) {
				wantTime(t, ev, time.Date(1990, 12, 31, 23, 59, 59, 999_999_999, time.UTC))
			}},
		{name: "time with a leap second mid-day", headers: set(validRecord(), "ce-time", "2016-12-31T12:00:60Z"), want: ReasonInvalidTime},
		{name: "time with second 61", headers: set(validRecord(), "ce-time", "2016-12-31T23:59:61Z"), want: ReasonInvalidTime},
		{name: "time without offset", headers: set(validRecord(), "ce-time", "2026-11-29T12:00:00"), want: ReasonInvalidTime},
		{name: "time with a space separator", headers: set(validRecord(), "ce-time", "2026-11-29 12:00:00Z"), want: ReasonInvalidTime},
		{name: "time with an empty fraction", headers: set(validRecord(), "ce-time", "2026-11-29T12:00:00.Z"), want: ReasonInvalidTime},
		{name: "time with a comma fraction", headers: set(validRecord(), "ce-time", "2026-11-29T12:00:00,5Z"), want: ReasonInvalidTime},
		{name: "time with offset hour 24", headers: set(validRecord(), "ce-time", "2026-11-29T12:00:00+24:00"), want: ReasonInvalidTime},
		{name: "time with a one-digit hour", headers: set(validRecord(), "ce-time", "2026-11-29T1:00:00Z"), want: ReasonInvalidTime},
		{name: "time with a compact offset", headers: set(validRecord(), "ce-time", "2026-11-29T12:00:00+0300"), want: ReasonInvalidTime},
		{name: "time with a letter for a digit", headers: set(validRecord(), "ce-time", "2026-1a-29T12:00:00Z"), want: ReasonInvalidTime},
		{name: "time with month 13", headers: set(validRecord(), "ce-time", "2026-13-01T12:00:00Z"), want: ReasonInvalidTime},

		// Rule 3: schemaversion.
		{name: "schemaversion with leading zeros", headers: set(validRecord(), "ce-schemaversion", "007.01"),
			check: func(t *testing.T, ev Event) { wantField(t, "SchemaMajor", ev.SchemaMajor, 7) }},
		{name: "schemaversion major 0", headers: set(validRecord(), "ce-schemaversion", "0.9"),
			check: func(t *testing.T, ev Event) { wantField(t, "SchemaMajor", ev.SchemaMajor, 0) }},
		{name: "schemaversion major at the int32 limit", headers: set(validRecord(), "ce-schemaversion", "2147483647.0.0"),
			check: func(t *testing.T, ev Event) { wantField(t, "SchemaMajor", ev.SchemaMajor, 2147483647) }},
		{name: "schemaversion major past the int32 limit", headers: set(validRecord(), "ce-schemaversion", "2147483648"), want: ReasonInvalidSchemaVersion},
		{name: "schemaversion major past int64", headers: set(validRecord(), "ce-schemaversion", "99999999999999999999999"), want: ReasonInvalidSchemaVersion},
		{name: "schemaversion long minor", headers: set(validRecord(), "ce-schemaversion", "1.99999999999999999999999")},
		{name: "schemaversion with four parts", headers: set(validRecord(), "ce-schemaversion", "1.0.0.0"), want: ReasonInvalidSchemaVersion},
		{name: "schemaversion with a trailing dot", headers: set(validRecord(), "ce-schemaversion", "1."), want: ReasonInvalidSchemaVersion},
		{name: "schemaversion with a leading dot", headers: set(validRecord(), "ce-schemaversion", ".1"), want: ReasonInvalidSchemaVersion},
		{name: "schemaversion with a pre-release", headers: set(validRecord(), "ce-schemaversion", "1.0.0-rc1"), want: ReasonInvalidSchemaVersion},
		{name: "schemaversion with a sign", headers: set(validRecord(), "ce-schemaversion", "+1"), want: ReasonInvalidSchemaVersion},

		// Rule 3: resourcetype, eventtype, tenantid.
		{name: "resourcetype starting with an underscore", headers: set(validRecord(), "ce-resourcetype", "_transaction"), want: ReasonInvalidResourceType},
		{name: "segments with digits, underscore and hyphen", headers: set(set(set(validRecord(),
			"ce-type", "studio.lerian.9tx_v2.posted-now"), "ce-resourcetype", "9tx_v2"), "ce-eventtype", "posted-now"),
			check: func(t *testing.T, ev Event) {
				wantField(t, "Key", ev.Key, "9tx_v2.posted-now")
				wantField(t, "ResourceType", ev.ResourceType, "9tx_v2")
				wantField(t, "EventType", ev.EventType, "posted-now")
			}},
		{name: "eventtype with a dot", headers: set(set(validRecord(), "ce-type", "studio.lerian.transaction.posted.v2"), "ce-eventtype", "posted.v2"), want: ReasonInvalidEventType},
		{name: "tenantid of 128 characters", headers: set(validRecord(), "ce-tenantid", long(128))},
		{name: "tenantid of 129 characters", headers: set(validRecord(), "ce-tenantid", long(129)), want: ReasonInvalidTenantID},
		{name: "tenantid starting with a dot", headers: set(validRecord(), "ce-tenantid", ".hidden"), want: ReasonInvalidTenantID},
		{name: "tenantid with a slash", headers: set(validRecord(), "ce-tenantid", "a/b"), want: ReasonInvalidTenantID},

		// Rule 3: optional attributes are walked after systemevent.
		{name: "subject with a newline", headers: add(validRecord(), "ce-subject", "a\nb"), want: ReasonInvalidSubject},
		{name: "datacontenttype with CRLF", headers: add(validRecord(), "content-type", "text/plain\r\nX-Injected: 1"), want: ReasonInvalidDataContentType},
		{name: "dataschema with invalid UTF-8", headers: add(validRecord(), "ce-dataschema", "\xc3("), want: ReasonInvalidDataSchema},
		{name: "traceparent with a NUL", headers: add(validRecord(), "ce-traceparent", "00\x00"), want: ReasonInvalidTraceParent},
		{name: "tracestate with DEL", headers: add(validRecord(), "ce-tracestate", "a=\x7f"), want: ReasonInvalidTraceState},
		{name: "bad systemevent beats a bad subject", headers: add(validRecord(), "ce-subject", "\x00", "ce-systemevent", "1"), want: ReasonInvalidSystemEvent},

		// Rule 4.
		{name: "value exactly at the limit", headers: validRecord(), value: long(16), opts: Options{MaxEventBytes: 16}},
		{name: "value one byte over the limit", headers: validRecord(), value: long(17), opts: Options{MaxEventBytes: 16}, want: ReasonPayloadTooLarge},
		{name: "rule 3 beats payload size", headers: without(validRecord(), "ce-time"), value: long(17), opts: Options{MaxEventBytes: 16}, want: ReasonMissingTime},
		{name: "zero limit means the default", headers: validRecord(), value: long(DefaultMaxEventBytes)},
		{name: "negative limit means the default", headers: validRecord(), value: long(DefaultMaxEventBytes + 1), opts: Options{MaxEventBytes: -1}, want: ReasonPayloadTooLarge},
		{name: "nil value", headers: validRecord(),
			check: func(t *testing.T, ev Event) { wantField(t, "len(Data)", len(ev.Data), 0) }},
		{name: "no headers at all", want: ReasonMissingSpecVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var value []byte
			if tt.value != "" {
				value = []byte(tt.value)
			}
			ev, v, ok := Parse(tt.headers, value, tt.opts)
			if tt.want == "" {
				if !ok {
					t.Fatalf("rejected: %s", v)
				}
				if v != (Verdict{}) {
					t.Errorf("accepted with a non-zero verdict %s", v)
				}
				if tt.check != nil {
					tt.check(t, ev)
				}
				return
			}
			if ok {
				t.Fatalf("accepted, want %s", tt.want)
			}
			if v.Reason != tt.want {
				t.Fatalf("verdict %s, want reason %s", v, tt.want)
			}
			if wantKind := kindOf(tt.want); v.Kind != wantKind {
				t.Errorf("kind %s, want %s", v.Kind, wantKind)
			}
			if !reflect.DeepEqual(ev, Event{}) {
				t.Errorf("a rejection returned a non-zero event %+v", ev)
			}
		})
	}
}

// manyExtensions appends n distinct extension headers.
func manyExtensions(headers []Header, n int) []Header {
	out := append([]Header(nil), headers...)
	for i := range n {
		out = append(out, Header{Key: "ce-ext" + strconv.Itoa(i), Value: []byte("v")})
	}
	return out
}

func headerBytes(headers []Header) int {
	n := 0
	for _, h := range headers {
		n += len(h.Key) + len(h.Value)
	}
	return n
}

func wantField[T comparable](t *testing.T, field string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", field, got, want)
	}
}

func wantTime(t *testing.T, ev Event, want time.Time) {
	t.Helper()
	if !ev.Time.Equal(want) || ev.Time.Location() != time.UTC {
		t.Errorf("Time = %v, want %v in UTC", ev.Time, want)
	}
}

// TestParseDetails checks that details point at the problem and stay
// printable whatever bytes the record carried.
func TestParseDetails(t *testing.T) {
	tests := []struct {
		name     string
		headers  []Header
		contains []string
	}{
		{"duplicate names both headers", add(validRecord(), "CE_ID", "x"), []string{`"id"`, `"ce-id"`, `"CE_ID"`}},
		{"missing names the attribute", without(validRecord(), "ce-source"), []string{"source", "missing"}},
		{"invalid quotes the value", set(validRecord(), "ce-id", "nope"), []string{`"nope"`, "UUIDv7"}},
		{"type names the expected suffix", set(validRecord(), "ce-type", "studio.lerian.transaction.created"), []string{`".transaction.posted"`}},
		{"binary garbage is escaped", set(validRecord(), "ce-source", "\x00\xff"), []string{`"\x00\xff"`}},
		{"long values are cut", set(validRecord(), "ce-tenantid", strings.Repeat("z", 3000)), []string{"3000 bytes"}},
		{"too many headers says how many", manyExtensions(validRecord(), 100), []string{"109 headers", "limit is 64"}},
		{"a long attribute names its header", set(validRecord(), "ce-source", strings.Repeat("s", 5000)), []string{`"ce-source"`, "5000 bytes", "4096"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, v, ok := Parse(tt.headers, nil, Options{})
			if ok {
				t.Fatal("accepted")
			}
			for _, s := range tt.contains {
				if !strings.Contains(v.Detail, s) {
					t.Errorf("detail %q does not contain %q", v.Detail, s)
				}
			}
			if len(v.Detail) > 400 {
				t.Errorf("detail is %d bytes long", len(v.Detail))
			}
		})
	}
}

func TestAdmit(t *testing.T) {
	tests := []struct {
		status TenantStatus
		ok     bool
		reason Reason
	}{
		{TenantActive, true, ""},
		{TenantUnknown, false, ReasonUnknownTenant},
		{TenantInactive, false, ReasonInactiveTenant},
		{TenantStatus(42), false, ReasonInactiveTenant},
	}
	for _, tt := range tests {
		v, ok := Admit(tt.status)
		if ok != tt.ok || v.Reason != tt.reason {
			t.Errorf("Admit(%d) = %s, %t; want reason %q, %t", tt.status, v, ok, tt.reason, tt.ok)
		}
		if !ok && v.Kind != Discard {
			t.Errorf("Admit(%d) kind %s, want discard", tt.status, v.Kind)
		}
	}
}

// TestDecideOrder checks the roster and inbox rules on top of Parse: a
// record rejected by rules 1–4 never reaches the lookups, and a roster
// discard still returns the event so it can be logged with its tenant.
func TestDecideOrder(t *testing.T) {
	failLookup := func(t *testing.T) (RosterLookup, InboxLookup) {
		return func(string) TenantStatus { t.Error("roster consulted"); return TenantActive },
			func(string, string) bool { t.Error("inbox consulted"); return false }
	}
	t.Run("quarantine skips the lookups", func(t *testing.T) {
		roster, inbox := failLookup(t)
		if _, v := Decide(without(validRecord(), "ce-id"), nil, Options{}, roster, inbox); v.Reason != ReasonMissingID {
			t.Errorf("verdict %s", v)
		}
	})
	t.Run("inactive tenant skips the inbox", func(t *testing.T) {
		_, inbox := failLookup(t)
		ev, v := Decide(validRecord(), nil, Options{}, func(string) TenantStatus { return TenantInactive }, inbox)
		if v.Reason != ReasonInactiveTenant || ev.TenantID != validTenant {
			t.Errorf("verdict %s, tenant %q", v, ev.TenantID)
		}
	})
	t.Run("inbox gets the lowercase id", func(t *testing.T) {
		var gotTenant, gotID string
		_, v := Decide(set(validRecord(), "ce-id", strings.ToUpper(validID)), nil, Options{},
			func(string) TenantStatus { return TenantActive },
			func(tenant, id string) bool { gotTenant, gotID = tenant, id; return true })
		if v != Duplicate() || gotTenant != validTenant || gotID != validID {
			t.Errorf("verdict %s, inbox asked for (%q, %q)", v, gotTenant, gotID)
		}
	})
	t.Run("accept", func(t *testing.T) {
		ev, v := Decide(validRecord(), nil, Options{},
			func(string) TenantStatus { return TenantActive }, func(string, string) bool { return false })
		if v != Accepted() || ev.Key != "transaction.posted" {
			t.Errorf("verdict %s, key %q", v, ev.Key)
		}
	})
}

func TestVerdictString(t *testing.T) {
	if got := Accepted().String(); got != "accept" {
		t.Errorf("Accepted().String() = %q", got)
	}
	v := Verdict{Kind: Quarantine, Reason: ReasonInvalidID, Detail: "bad"}
	if got := v.String(); got != "quarantine invalid_id: bad" {
		t.Errorf("String() = %q", got)
	}
}

// TestParseAllocations guards the ingest hot path: a typical record costs one
// allocation (the attribute strings), a system event none.
func TestParseAllocations(t *testing.T) {
	headers, value := benchmarkRecord()
	if n := testing.AllocsPerRun(100, func() { Parse(headers, value, Options{}) }); n > 1 {
		t.Errorf("Parse of a typical record allocates %.0f times, want at most 1", n)
	}
	system := add(validRecord(), "ce-systemevent", "true")
	if n := testing.AllocsPerRun(100, func() { Parse(system, value, Options{}) }); n != 0 {
		t.Errorf("Parse of a system event allocates %.0f times, want 0", n)
	}
}
