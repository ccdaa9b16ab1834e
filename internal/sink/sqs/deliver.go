package sqs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	sqsapi "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/awsclient"
)

// maxErrorBytes keeps recorded errors short.
const maxErrorBytes = 200

// queueSink is one subscription's queue.
type queueSink struct {
	client   *sqsapi.Client
	queueURL string
	fifo     bool
	// creds are scrubbed from every error text.
	creds awsclient.Credentials
}

// sendResult is what a successful send records as the response: SQS's own
// names for what it answered.
type sendResult struct {
	MessageID      string `json:"MessageId"`
	SequenceNumber string `json:"SequenceNumber,omitempty"`
}

// Deliver makes one SendMessage within d.Timeout and reports it. A message
// SQS could never accept (too large, an id a FIFO queue refuses) fails
// without a request, with the reason.
func (s *queueSink) Deliver(ctx context.Context, d sink.Delivery) sink.Outcome {
	input, err := buildMessage(s.queueURL, s.fifo, d)
	if err != nil {
		return sink.Outcome{Error: err.Error(), NotSent: true}
	}
	timeout := sink.AttemptTimeout(d.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	out, err := s.client.SendMessage(ctx, input)
	if err != nil {
		status, reason := s.describeError(ctx, err, timeout)
		return sink.Outcome{StatusCode: status, Error: reason}
	}
	response, _ := json.Marshal(sendResult{
		MessageID:      deref(out.MessageId),
		SequenceNumber: deref(out.SequenceNumber),
	})
	return sink.Outcome{OK: true, StatusCode: responseStatus(out.ResultMetadata), Response: response}
}

// Probe asks for the queue's ARN with the subscription's credentials: it
// proves the queue exists and the key may use it, and sends nothing. The
// answer must carry the ARN of this very queue: with a custom endpoint, any
// server answering 200 would otherwise pass for SQS.
func (s *queueSink) Probe(ctx context.Context, p sink.ProbeRequest) error {
	timeout := sink.AttemptTimeout(p.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := s.client.GetQueueAttributes(ctx, &sqsapi.GetQueueAttributesInput{
		QueueUrl:       &s.queueURL,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	if err != nil {
		_, reason := s.describeError(ctx, err, timeout)
		return errors.New(reason)
	}
	if err := checkQueueARN(s.queueURL, out.Attributes[string(types.QueueAttributeNameQueueArn)]); err != nil {
		return errors.New(s.creds.Scrub(err.Error()))
	}
	return nil
}

// checkQueueARN accepts an SQS queue ARN (arn:<partition>:sqs:<region>:
// <account>:<name>) whose name is the last segment of the queue URL.
func checkQueueARN(queueURL, arn string) error {
	name := queueURL[strings.LastIndexByte(queueURL, '/')+1:]
	parts := strings.Split(arn, ":")
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "sqs" || parts[5] != name {
		return errors.New("GetQueueAttributes did not answer with the ARN of queue " + strconv.Quote(truncate(name, 80)) +
			" (got " + strconv.Quote(truncate(arn, 120)) + "): the endpoint is not SQS or not this queue's")
	}
	return nil
}

// Close does nothing: the client belongs to the Type's cache and its
// connections to the Type's transport, both shared with other sinks.
func (s *queueSink) Close() error { return nil }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// responseStatus is the HTTP status of a successful call, 200 when the SDK
// kept no response to read it from.
func responseStatus(metadata middleware.Metadata) int {
	if resp, ok := awsmiddleware.GetRawResponse(metadata).(*smithyhttp.Response); ok && resp != nil {
		return resp.StatusCode
	}
	return http.StatusOK
}

// describeError turns a failed call into the HTTP status, when SQS
// answered, and a short reason free of credentials.
func (s *queueSink) describeError(attemptCtx context.Context, err error, timeout time.Duration) (int, string) {
	status := 0
	if respErr, ok := errors.AsType[*awshttp.ResponseError](err); ok {
		status = respErr.HTTPStatusCode()
	}
	// Scrubbed before it is cut, so no part of a secret survives the cut.
	return status, truncate(s.creds.Scrub(reason(attemptCtx, err, timeout, status)), maxErrorBytes)
}

// reason is the unscrubbed reason of a failed call.
func reason(attemptCtx context.Context, err error, timeout time.Duration, status int) string {
	if refused, ok := errors.AsType[*netguard.RefusedError](err); ok {
		return "destination refused: " + refused.Error()
	}
	if apiErr, ok := errors.AsType[smithy.APIError](err); ok {
		text := "SQS error " + apiErr.ErrorCode()
		if status != 0 {
			text = "HTTP " + strconv.Itoa(status) + ", " + text
		}
		if msg := apiErr.ErrorMessage(); msg != "" {
			text += ": " + msg
		}
		return text
	}
	if errors.Is(attemptCtx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("no response within %s", timeout)
	}
	if netErr, ok := errors.AsType[net.Error](err); ok && netErr.Timeout() {
		return fmt.Sprintf("no response within %s", timeout)
	}
	if errors.Is(err, context.Canceled) {
		return "attempt cancelled"
	}
	if status != 0 {
		return "HTTP " + strconv.Itoa(status) + " " + http.StatusText(status)
	}
	// The SDK's wrappers ("operation error SQS: SendMessage, https response
	// error StatusCode: 0, RequestID: , request send failed, Post …") add
	// length, not meaning; the innermost transport error is the reason.
	if urlErr, ok := errors.AsType[*url.Error](err); ok {
		return urlErr.Err.Error()
	}
	if sendErr, ok := errors.AsType[*smithyhttp.RequestSendError](err); ok && sendErr.Err != nil {
		return sendErr.Err.Error()
	}
	if opErr, ok := errors.AsType[*smithy.OperationError](err); ok && opErr.Err != nil {
		return opErr.Err.Error()
	}
	return err.Error()
}

// truncate cuts s to at most limit bytes without splitting a character.
func truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
