package events

import (
	"encoding/json"
	"fmt"
	"math"
	"mime"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/jsonpos"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// produceInput is what `events produce` was asked for, flags as given and
// the data already read.
type produceInput struct {
	Tenant string
	Type   string // the event key, <resourcetype>.<eventtype>
	// TypeGivenAs is how the user gave Type, for its error: "--type"
	// unless set (trigger takes the key as its argument).
	TypeGivenAs   string
	Topic         string // "" for the platform's topic of the event
	Source        string
	SchemaVersion string
	ContentType   string
	Subject       string
	Data          []byte
	// Headers (--header k=v) are added to the record as given, after the
	// ones the tool writes; Omit (--omit attr) drops the tool's own header
	// of an attribute. Either lets a record be malformed on purpose, to
	// try quarantine, so the record is not checked against ingest's rules.
	Headers []kgo.RecordHeader
	Omit    []string
}

// template is what every event of one run shares; only the id and the time
// differ from one event to the next.
type template struct {
	topic         string
	tenant        string
	source        string
	ceType        string
	resourceType  string
	eventType     string
	schemaVersion string
	contentType   string
	subject       string
	data          []byte
	extra         []kgo.RecordHeader
	omit          map[string]bool // header keys, lower case
}

var (
	segmentPattern       = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	schemaVersionPattern = regexp.MustCompile(`^[0-9]+(\.[0-9]+){0,2}$`)
	topicPattern         = regexp.MustCompile(`^[A-Za-z0-9._-]{1,249}$`)
)

const segmentRule = `[a-z0-9][a-z0-9_-]*`

// newTemplate checks the input against the attribute rules (docs/concepts.md, Events) and builds the
// events' common part. Each problem is reported against the flag that
// caused it, before any connection is made.
func newTemplate(in produceInput, typePrefix string) (template, error) {
	if err := hubapi.CheckTenantID(in.Tenant); err != nil {
		return template{}, fmt.Errorf("invalid --tenant %q: a tenant id must match %s", in.Tenant, hubapi.TenantIDRule)
	}
	resourceType, eventType, ok := strings.Cut(in.Type, ".")
	if !ok || !segmentPattern.MatchString(resourceType) || !segmentPattern.MatchString(eventType) {
		givenAs := in.TypeGivenAs
		if givenAs == "" {
			givenAs = "--type"
		}
		return template{}, fmt.Errorf("invalid %s %q: want <resourcetype>.<eventtype>, each matching %s, e.g. transaction.posted", givenAs, in.Type, segmentRule)
	}
	if !segmentPattern.MatchString(in.Source) {
		return template{}, fmt.Errorf("invalid --source %q: the producing service's name must match %s, e.g. midaz", in.Source, segmentRule)
	}
	if !schemaVersionPattern.MatchString(in.SchemaVersion) {
		return template{}, fmt.Errorf("invalid --schema-version %q: want MAJOR[.MINOR[.PATCH]], digits only, e.g. 1.0.0", in.SchemaVersion)
	}
	topic := in.Topic
	if topic == "" {
		topic = defaultTopic(in.Source, resourceType, eventType)
		if !isTopicName(topic) {
			return template{}, fmt.Errorf("the default topic %s is longer than Kafka allows: pass a --topic", topic)
		}
	} else if !isTopicName(topic) {
		return template{}, fmt.Errorf("invalid --topic %q: a Kafka topic name is 1-249 of A-Z a-z 0-9 . _ -", topic)
	}
	if _, _, err := mime.ParseMediaType(in.ContentType); err != nil {
		return template{}, fmt.Errorf("invalid --content-type %q: %v", in.ContentType, err)
	}
	if isJSONContentType(in.ContentType) && !json.Valid(in.Data) {
		var v any
		return template{}, fmt.Errorf("--data is not valid JSON (%s), as content type %s requires; fix it or pass --content-type",
			jsonpos.Describe(json.Unmarshal(in.Data, &v), in.Data), in.ContentType)
	}

	if typePrefix == "" {
		typePrefix = event.DefaultTypePrefix // as ingest reads an empty prefix
	}
	t := template{
		topic:         topic,
		tenant:        in.Tenant,
		source:        in.Source,
		ceType:        typePrefix + in.Source + "." + in.Type,
		resourceType:  resourceType,
		eventType:     eventType,
		schemaVersion: in.SchemaVersion,
		contentType:   in.ContentType,
		subject:       in.Subject,
		data:          in.Data,
		extra:         in.Headers,
	}
	if len(in.Omit) > 0 {
		t.omit = map[string]bool{}
		for _, attr := range in.Omit {
			key := strings.ToLower(attr)
			if key != "content-type" && !strings.HasPrefix(key, "ce-") {
				key = "ce-" + key
			}
			t.omit[key] = true
		}
	}
	if len(in.Headers) > 0 || len(in.Omit) > 0 {
		return t, nil // malformed on purpose: ingest decides what it is
	}
	// The hub's own parser has the last word on what is well formed, so the
	// tool cannot drift from ingest: the subject, the content type and the
	// prefix are judged exactly as ingest will judge them. Size is not a
	// CloudEvents rule but a deployment limit, so it is left to the hub.
	sample := t.record(sampleID, time.Unix(0, 0))
	headers := make([]event.Header, len(sample.Headers))
	for i, h := range sample.Headers {
		headers[i] = event.Header(h)
	}
	if _, verdict, ok := event.Parse(headers, sample.Value, event.Options{TypePrefix: typePrefix, MaxEventBytes: math.MaxInt}); !ok {
		return template{}, fmt.Errorf("the event would be quarantined by the hub (%s): %s", verdict.Reason, verdict.Detail)
	}
	return t, nil
}

// sampleID stands in for the generated ids when the template is checked.
const sampleID = "01890a5d-ac96-774b-bcce-b302099a8057"

// defaultTopic is the platform's topic for an event:
// lerian.streaming.<source>_<resource>.<event>, hyphens as underscores.
func defaultTopic(source, resourceType, eventType string) string {
	underscore := func(s string) string { return strings.ReplaceAll(s, "-", "_") }
	return "lerian.streaming." + underscore(source) + "_" + underscore(resourceType) + "." + underscore(eventType)
}

// isTopicName applies Kafka's rule for topic names.
func isTopicName(s string) bool {
	return topicPattern.MatchString(s) && s != "." && s != ".."
}

// isJSONContentType reports whether a content type carries JSON:
// application/json or a +json type such as application/problem+json, with
// or without parameters.
func isJSONContentType(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mediaType == "application/json" || strings.HasSuffix(mediaType, "+json"))
}

// record builds one event as a Kafka record in CloudEvents binary mode: the
// attributes as ce- headers, the data as the value. The tenant is the record
// key, so a tenant's events share a partition and keep their order (docs/concepts.md, Ordering), as the platform's producers do.
func (t template) record(id string, at time.Time) *kgo.Record {
	headers := []kgo.RecordHeader{
		{Key: "ce-specversion", Value: []byte("1.0")},
		{Key: "ce-id", Value: []byte(id)},
		{Key: "ce-source", Value: []byte(t.source)},
		{Key: "ce-type", Value: []byte(t.ceType)},
		{Key: "ce-time", Value: []byte(at.UTC().Format(time.RFC3339Nano))},
		{Key: "ce-schemaversion", Value: []byte(t.schemaVersion)},
		{Key: "ce-resourcetype", Value: []byte(t.resourceType)},
		{Key: "ce-eventtype", Value: []byte(t.eventType)},
		{Key: "ce-tenantid", Value: []byte(t.tenant)},
	}
	if t.subject != "" {
		headers = append(headers, kgo.RecordHeader{Key: "ce-subject", Value: []byte(t.subject)})
	}
	headers = append(headers, kgo.RecordHeader{Key: "content-type", Value: []byte(t.contentType)})
	if t.omit != nil {
		headers = slices.DeleteFunc(headers, func(h kgo.RecordHeader) bool { return t.omit[h.Key] })
	}
	headers = append(headers, t.extra...)
	return &kgo.Record{Topic: t.topic, Key: []byte(t.tenant), Value: t.data, Headers: headers}
}
