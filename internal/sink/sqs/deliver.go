package sqs

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	sqsapi "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hubctl/hubctl/internal/clip"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/awsclient"
)

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
		status, reason := awsclient.DescribeError("SQS", s.creds, ctx, err, timeout)
		return sink.Outcome{StatusCode: status, Error: reason}
	}
	response, _ := json.Marshal(sendResult{
		MessageID:      deref(out.MessageId),
		SequenceNumber: deref(out.SequenceNumber),
	})
	return sink.Outcome{OK: true, StatusCode: awsclient.ResponseStatus(out.ResultMetadata), Response: response}
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
		_, reason := awsclient.DescribeError("SQS", s.creds, ctx, err, timeout)
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
		return errors.New("GetQueueAttributes did not answer with the ARN of queue " + strconv.Quote(clip.String(name, 80)) +
			" (got " + strconv.Quote(clip.String(arn, 120)) + "): the endpoint is not SQS or not this queue's")
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
