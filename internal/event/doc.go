// Package event turns one Kafka record into either an accepted CloudEvent or a
// verdict saying why it is discarded or quarantined (docs/concepts.md, Events; docs/concepts.md, Verdicts).
//
// Records are CloudEvents 1.0 in binary content mode: context attributes are
// record headers named `ce-<attribute>` or `ce_<attribute>` (case-insensitive),
// a `content-type` header also supplies `datacontenttype`, and the record value
// is the event data, kept byte for byte. Headers that name no attribute are
// kept on the event but never read as attributes.
//
// Every record gets exactly one verdict; the first rule that applies wins:
//
//  0. more headers or header bytes than the configured maximum
//     → quarantine headers_too_large; then an attribute (a ce- header or
//     content-type) longer than the maximum → quarantine attribute_too_large
//  1. an attribute appears twice with different values → quarantine duplicate_attribute
//  2. systemevent is "true"                               → discard system_event
//  3. walking the attributes in the order of the attribute table (docs/concepts.md, Events), the first one
//     that is missing/empty or malformed                  → quarantine missing_<attr> / invalid_<attr>
//  4. the value is larger than the configured maximum     → quarantine payload_too_large
//  5. the tenant is not in the roster                     → discard unknown_tenant
//  6. the tenant is in the roster but not active          → discard inactive_tenant
//  7. (tenant, id) is already in the inbox                → discard duplicate
//  8. otherwise                                           → accept
//
// Rules 0–4 need only the record and are applied by [Parse]. Rules 5–7 need
// state the package does not own, so they take it as plain values: [Admit]
// decides rules 5–6 from a roster answer and [Duplicate] is rule 7's verdict,
// which ingest reaches through the inbox insert's ON CONFLICT answer. [Decide]
// composes all eight rules over lookup functions; it is the reference order
// ingest must keep, and what the conformance vectors are run against.
//
// Decisions the rules leave open, made here:
//
//   - Rule 1 covers every attribute, CloudEvents extensions included, and
//     `content-type` counts as `datacontenttype`. Repeating an attribute with
//     the same bytes is not a conflict.
//   - `systemevent` is a CloudEvents Boolean: exactly "true" marks a system
//     event, "false" or empty does not, anything else (e.g. "TRUE") is
//     invalid_systemevent at its place in the walk, after tenantid. Treating
//     such a record as a tenant event could hand a platform event to tenants.
//   - Every accepted string attribute is a valid CloudEvents String (UTF-8,
//     no control characters, no Unicode noncharacters); otherwise the record
//     is quarantined as invalid_<attribute>. These values go to PostgreSQL text
//     columns and HTTP headers, where such bytes would fail every insert or
//     delivery and stall the partition instead of quarantining one record.
//   - The id is stored in lowercase: it is the deduplication key, and the
//     same UUID must deduplicate whatever the producer's letter case.
//   - time is strict RFC 3339: lowercase `t`/`z` are allowed (RFC 3339 §5.6),
//     fractions beyond nanoseconds are truncated. A leap second (`:60`) is
//     valid at the end of a UTC day (23:59:60Z, 15:59:60-08:00) and nowhere
//     else; Go's time cannot hold it, so the parsed time is the minute's last
//     nanosecond (in order, and distinct from the next day's first second),
//     and that is the time stored and delivered. The parsed time is in UTC;
//     the original text is kept beside it.
//   - Rule 0 bounds what one record costs. It comes first so that the other
//     rules only ever walk bounded input. Header bytes count every name and value; the attribute limit applies
//     to each ce- header (extensions included) and content-type, while
//     plain headers are bounded by the header bytes only.
//   - schemaversion allows leading zeros ("digits only"; "01.2" has major 1);
//     a major above 2147483647 is invalid_schemaversion, so it fits the int
//     columns and JSON numbers it is matched against. Major 0 is valid and
//     simply matches no subscription (schema_major ≥ 1).
//   - The segment agreement of `type` (ending in .<resourcetype>.<eventtype>)
//     is checked only when both segments are themselves well formed, so a bad
//     segment is reported under its own name, as the vectors require.
package event
