package sqs

import (
	"encoding/base64"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqsapi "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hubctl/hubctl/internal/sink"
)

// The message attributes are sink.Attributes (docs/concepts.md, Sinks),
// plus one of SQS's own:
const (
	// AttrBodyEncoding is present, with the value BodyEncodingBase64, only
	// when the body is the base64 encoding of the event data because the
	// data itself is not text SQS can carry.
	AttrBodyEncoding   = "lerian-body-encoding"
	BodyEncodingBase64 = "base64"
)

const (
	// MaxMessageBytes is SQS's limit on a message: its body plus, for
	// every attribute, the name, data type and value.
	MaxMessageBytes = 256 << 10
	// maxFIFOIDLength is SQS's limit on MessageGroupId and
	// MessageDeduplicationId.
	maxFIFOIDLength = 128
	// stringType is the data type of every attribute the sink sends.
	stringType = "String"
)

// buildMessage turns a delivery into the SendMessage request for one queue,
// or says why SQS could not accept it; the reason is final for this event,
// so it names the limit that was hit rather than a transient failure.
//
// Event data that is not text SQS allows (valid UTF-8 without most control
// characters) is sent base64-encoded with lerian-body-encoding: base64
// rather than refused: the hub stores data byte for byte and a consumer
// can restore it exactly, whereas refusing would dead-letter the event on
// every retry. Text data, the common case, is sent as it is.
func buildMessage(queueURL string, fifo bool, d sink.Delivery) (*sqsapi.SendMessageInput, error) {
	if len(d.Payload) == 0 {
		return nil, errors.New("SQS cannot carry an empty message body and the event data is empty")
	}
	body, encoded := messageBody(d.Payload)

	attrs := sink.Attributes(d)
	if encoded {
		attrs = append(attrs, sink.Attribute{Name: AttrBodyEncoding, Value: BodyEncodingBase64})
	}
	attributes := make(map[string]types.MessageAttributeValue, len(attrs))
	size := len(body)
	for _, attr := range attrs {
		if !isSQSText(attr.Value) {
			return nil, fmt.Errorf("message attribute %s contains characters SQS does not allow", attr.Name)
		}
		attributes[attr.Name] = types.MessageAttributeValue{DataType: aws.String(stringType), StringValue: aws.String(attr.Value)}
		size += len(attr.Name) + len(stringType) + len(attr.Value)
	}
	if size > MaxMessageBytes {
		what := "event data"
		if encoded {
			what = "base64-encoded event data"
		}
		return nil, fmt.Errorf("message too large for SQS: %d bytes (%s plus attributes), the limit is %d bytes (256 KiB)", size, what, MaxMessageBytes)
	}

	input := &sqsapi.SendMessageInput{
		QueueUrl:          aws.String(queueURL),
		MessageBody:       aws.String(body),
		MessageAttributes: attributes,
	}
	if fifo {
		// One group per tenant keeps each tenant's events in order without
		// one tenant's backlog holding up another's; the event id makes a
		// retry of a send that did arrive a duplicate SQS drops.
		if err := checkFIFOID("tenant id (the message group id)", d.TenantID); err != nil {
			return nil, err
		}
		if err := checkFIFOID("event id (the deduplication id)", d.EventID); err != nil {
			return nil, err
		}
		input.MessageGroupId = aws.String(d.TenantID)
		input.MessageDeduplicationId = aws.String(d.EventID)
	}
	return input, nil
}

// messageBody is the payload as SQS text, base64-encoded when it is not.
func messageBody(payload []byte) (body string, encoded bool) {
	if isSQSText(string(payload)) {
		return string(payload), false
	}
	return base64.StdEncoding.EncodeToString(payload), true
}

// isSQSText reports whether s is valid UTF-8 made only of the characters
// SQS accepts in a message: #x9 | #xA | #xD | #x20–#xD7FF | #xE000–#xFFFD |
// #x10000–#x10FFFF (the XML 1.0 character set).
func isSQSText(s string) bool {
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			// Either invalid UTF-8 or a real U+FFFD, which is allowed.
			if _, width := utf8.DecodeRuneInString(s[i:]); width == 1 {
				return false
			}
		case r == '\t' || r == '\n' || r == '\r':
		case r < 0x20:
			return false
		case r >= 0xD800 && r <= 0xDFFF: // unreachable in valid UTF-8
			return false
		case r == 0xFFFE || r == 0xFFFF:
			return false
		}
	}
	return true
}

// checkFIFOID applies SQS's rule for group and deduplication ids: 1–128
// characters, letters, digits and ASCII punctuation.
func checkFIFOID(what, id string) error {
	if id == "" {
		return fmt.Errorf("a FIFO queue needs a %s and it is empty", what)
	}
	if len(id) > maxFIFOIDLength {
		return fmt.Errorf("%s is longer than the %d characters SQS allows on a FIFO queue", what, maxFIFOIDLength)
	}
	for i := range len(id) {
		if id[i] < 0x21 || id[i] > 0x7e {
			return fmt.Errorf("%s has characters SQS does not allow on a FIFO queue", what)
		}
	}
	return nil
}
