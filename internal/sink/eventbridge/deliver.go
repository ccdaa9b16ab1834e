package eventbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awseventbridge "github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"

	"github.com/hubctl/hubctl/internal/clip"
	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/awsclient"
)

const (
	// MaxEntryBytes is EventBridge's limit on one PutEvents entry, counted
	// the way EventBridge counts it (see EntrySize).
	MaxEntryBytes = 256 << 10
	// timeFieldBytes is what an entry's Time costs in EventBridge's count.
	timeFieldBytes = 14
	// maxErrorBytes keeps recorded failure reasons short.
	maxErrorBytes = 300
	// cloudEventsVersion is the specversion of every envelope.
	cloudEventsVersion = "1.0"
)

// busSink is one subscription's event bus.
type busSink struct {
	client     *awseventbridge.Client
	bus        string
	detailType string // "" means the event key
	// creds are scrubbed from every reason the sink reports, in case a
	// server echoes part of a request back.
	creds awsclient.Credentials
}

// Envelope is the Detail of every entry: the event as a CloudEvent in JSON
// format, plus the hub's own identifiers as extension attributes, so a
// rule target sees what the X-Lerian-* headers carry for webhooks.
type Envelope struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Time            string          `json:"time,omitempty"`
	Subject         string          `json:"subject,omitempty"`
	DataContentType string          `json:"datacontenttype"`
	DataSchema      string          `json:"dataschema,omitempty"`
	TenantID        string          `json:"tenantid"`
	SchemaVersion   string          `json:"schemaversion"`
	EventKey        string          `json:"eventkey"`
	DeliveryID      string          `json:"deliveryid"`
	TraceParent     string          `json:"traceparent,omitempty"`
	TraceState      string          `json:"tracestate,omitempty"`
	Data            json.RawMessage `json:"data,omitempty"`
	DataBase64      []byte          `json:"data_base64,omitempty"`
}

// Entry is the PutEvents entry of one delivery, before it meets the SDK.
type Entry struct {
	Source     string
	DetailType string
	Detail     string
	Time       time.Time // zero: EventBridge stamps the time of the call
}

// NewEnvelope renders a delivery as a CloudEvent. The payload is embedded
// as JSON when it is JSON (by content type and by content), so rules can
// match on its fields; anything else travels as data_base64, byte for byte.
func NewEnvelope(d sink.Delivery) Envelope {
	contentType := d.ContentType()
	env := Envelope{
		SpecVersion:     cloudEventsVersion,
		ID:              d.EventID,
		Source:          d.Source,
		Type:            d.Type,
		Subject:         d.Subject,
		DataContentType: contentType,
		DataSchema:      d.DataSchema,
		TenantID:        d.TenantID,
		SchemaVersion:   d.SchemaVersion,
		EventKey:        d.EventKey,
		DeliveryID:      d.DeliveryID,
		TraceParent:     d.TraceParent,
		TraceState:      d.TraceState,
	}
	if !d.Time.IsZero() {
		env.Time = d.Time.Format(time.RFC3339Nano)
	}
	switch {
	case len(d.Payload) == 0:
		// An event without data has neither member (CloudEvents JSON §3.1).
	case isJSONContentType(contentType) && json.Valid(d.Payload):
		env.Data = d.Payload
	default:
		env.DataBase64 = d.Payload
	}
	return env
}

// isJSONContentType reports whether a media type is JSON by the rule of the
// CloudEvents JSON format: application/json or any +json suffix.
func isJSONContentType(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
}

// BuildEntry is the entry one delivery becomes, or why it cannot be sent:
// EventBridge refuses an entry without Source or DetailType, or larger than
// MaxEntryBytes, and saying so here names the cause instead of the
// service's generic validation error.
func BuildEntry(d sink.Delivery, detailType string) (Entry, error) {
	if d.Source == "" {
		return Entry{}, errors.New("event has no source; EventBridge requires one")
	}
	if detailType == "" {
		detailType = d.EventKey
	}
	if detailType == "" {
		return Entry{}, errors.New("event has no event key for the detail type; EventBridge requires one")
	}
	var detail bytes.Buffer
	enc := json.NewEncoder(&detail)
	// The payload's own < > & stay as the producer wrote them.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(NewEnvelope(d)); err != nil {
		return Entry{}, fmt.Errorf("cannot encode the event envelope: %w", err)
	}
	entry := Entry{
		Source:     d.Source,
		DetailType: detailType,
		Detail:     strings.TrimSuffix(detail.String(), "\n"),
		Time:       d.Time,
	}
	if size := EntrySize(entry); size > MaxEntryBytes {
		return Entry{}, fmt.Errorf("event too large for EventBridge: the entry is %d bytes, the limit is %d", size, MaxEntryBytes)
	}
	return entry, nil
}

// EntrySize is an entry's size as EventBridge counts it against
// MaxEntryBytes: 14 bytes for a Time, plus the UTF-8 bytes of Source,
// DetailType and Detail.
func EntrySize(e Entry) int {
	size := len(e.Source) + len(e.DetailType) + len(e.Detail)
	if !e.Time.IsZero() {
		size += timeFieldBytes
	}
	return size
}

// Deliver makes one PutEvents call with one entry within d.Timeout. Success
// is an accepted entry; a rejected entry is a failure with its error code.
func (s *busSink) Deliver(ctx context.Context, d sink.Delivery) sink.Outcome {
	timeout := sink.AttemptTimeout(d.Timeout)
	entry, err := BuildEntry(d, s.detailType)
	if err != nil {
		return sink.Outcome{Error: err.Error(), NotSent: true}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	input := &awseventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{{
		EventBusName: aws.String(s.bus),
		Source:       aws.String(entry.Source),
		DetailType:   aws.String(entry.DetailType),
		Detail:       aws.String(entry.Detail),
	}}}
	if !entry.Time.IsZero() {
		input.Entries[0].Time = aws.Time(entry.Time)
	}
	out, err := s.client.PutEvents(ctx, input)
	if err != nil {
		return sink.Outcome{StatusCode: statusCode(err), Error: s.scrub(describeError(ctx, err, timeout))}
	}
	return s.putEventsOutcome(out)
}

// resultEntry is the part of a PutEvents answer an attempt records.
type resultEntry struct {
	EventID      string `json:"EventId,omitempty"`
	ErrorCode    string `json:"ErrorCode,omitempty"`
	ErrorMessage string `json:"ErrorMessage,omitempty"`
}

type putEventsAnswer struct {
	FailedEntryCount int32         `json:"FailedEntryCount"`
	Entries          []resultEntry `json:"Entries"`
}

// putEventsOutcome judges a PutEvents answer. The HTTP exchange succeeded,
// but the entry may still have been refused: FailedEntryCount counts it and
// the entry carries the reason.
func (s *busSink) putEventsOutcome(out *awseventbridge.PutEventsOutput) sink.Outcome {
	answer := putEventsAnswer{FailedEntryCount: out.FailedEntryCount}
	for _, e := range out.Entries {
		answer.Entries = append(answer.Entries, resultEntry{
			EventID:      aws.ToString(e.EventId),
			ErrorCode:    aws.ToString(e.ErrorCode),
			ErrorMessage: aws.ToString(e.ErrorMessage),
		})
	}
	outcome := judgeAnswer(answer)
	outcome.StatusCode = http.StatusOK
	if raw, err := json.Marshal(answer); err == nil {
		outcome.Response = []byte(s.scrub(clip.String(string(raw), sink.MaxResponseBytes)))
	}
	outcome.Error = s.scrub(outcome.Error)
	return outcome
}

// judgeAnswer decides the outcome of a PutEvents answer for one entry.
func judgeAnswer(a putEventsAnswer) sink.Outcome {
	var entry resultEntry
	if len(a.Entries) > 0 {
		entry = a.Entries[0]
	}
	switch {
	case a.FailedEntryCount > 0 || entry.ErrorCode != "":
		code := entry.ErrorCode
		if code == "" {
			code = "unknown error"
		}
		reason := "entry rejected: " + code
		if entry.ErrorMessage != "" {
			reason += ": " + printable(entry.ErrorMessage)
		}
		return sink.Outcome{Error: clip.String(reason, maxErrorBytes)}
	case len(a.Entries) != 1:
		return sink.Outcome{Error: "PutEvents answered " + strconv.Itoa(len(a.Entries)) + " entries for 1 sent"}
	default:
		return sink.Outcome{OK: true}
	}
}

// Probe checks the bus exists and the credentials may see it, with
// DescribeEventBus (docs/concepts.md, Verification), within p.Timeout. Its error is what the
// tenant sees as verification_error.
func (s *busSink) Probe(ctx context.Context, p sink.ProbeRequest) error {
	timeout := sink.AttemptTimeout(p.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := s.client.DescribeEventBus(ctx, &awseventbridge.DescribeEventBusInput{Name: aws.String(s.bus)})
	if err != nil {
		return errors.New("DescribeEventBus: " + s.scrub(describeError(ctx, err, timeout)))
	}
	if err := checkDescribedBus(s.bus, aws.ToString(out.Name), aws.ToString(out.Arn)); err != nil {
		return errors.New(s.scrub(err.Error()))
	}
	return nil
}

// checkDescribedBus accepts a DescribeEventBus answer only when it names the
// bus asked about (by ARN when the subscription gives an ARN): with a custom
// endpoint, any server answering 200 would otherwise pass for EventBridge.
func checkDescribedBus(bus, name, arn string) error {
	if strings.HasPrefix(bus, "arn:") && arn == bus || !strings.HasPrefix(bus, "arn:") && name == bus && strings.HasPrefix(arn, "arn:") {
		return nil
	}
	return errors.New("DescribeEventBus did not answer with bus " + strconv.Quote(bus) + " (got name " +
		strconv.Quote(clip.String(name, 80)) + ", arn " + strconv.Quote(clip.String(arn, 160)) + "): the endpoint is not EventBridge or not this bus's")
}

// Close does nothing: connections belong to the Type, shared by all sinks.
func (s *busSink) Close() error { return nil }

// scrub removes the credentials from a reason before it is recorded.
func (s *busSink) scrub(reason string) string { return s.creds.Scrub(reason) }

// statusCode is the HTTP status of a failed call, or 0 when none came back.
func statusCode(err error) int {
	if respErr, ok := errors.AsType[*awshttp.ResponseError](err); ok {
		return respErr.HTTPStatusCode()
	}
	return 0
}

// describeError turns a failed SDK call into a short reason: the service's
// error code and message when it answered, else what kept the request from
// an answer. The SDK's wrappers (operation, URL) are peeled off because
// they add nothing an operator acts on.
func describeError(attemptCtx context.Context, err error, timeout time.Duration) string {
	if refused, ok := errors.AsType[*netguard.RefusedError](err); ok {
		return "destination refused: " + refused.Error()
	}
	if apiErr, ok := errors.AsType[smithy.APIError](err); ok {
		reason := apiErr.ErrorCode()
		if status := statusCode(err); status != 0 {
			reason = "HTTP " + strconv.Itoa(status) + " " + reason
		}
		if msg := apiErr.ErrorMessage(); msg != "" {
			reason += ": " + printable(msg)
		}
		return clip.String(reason, maxErrorBytes)
	}
	if errors.Is(attemptCtx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("no response within %s", timeout)
	}
	if errors.Is(err, context.Canceled) {
		return "attempt cancelled"
	}
	if opErr, ok := errors.AsType[*smithy.OperationError](err); ok {
		err = opErr.Err
	}
	if urlErr, ok := errors.AsType[*url.Error](err); ok {
		err = urlErr.Err
	}
	return clip.String(printable(err.Error()), maxErrorBytes)
}

// printable renders text from a server for a reason: valid UTF-8, no
// control characters, whitespace collapsed.
func printable(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	return strings.Join(strings.Fields(s), " ")
}
