package goawstest

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqsapi "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

func send(t *testing.T, s *Server, queueURL, body, group string) {
	t.Helper()
	in := &sqsapi.SendMessageInput{
		QueueUrl:    aws.String(queueURL),
		MessageBody: aws.String(body),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"lerian-event-id": {DataType: aws.String("String"), StringValue: aws.String("ev-" + body)},
		},
	}
	if group != "" {
		in.MessageGroupId = aws.String(group)
		in.MessageDeduplicationId = aws.String("dedup-" + body)
	}
	if _, err := s.Client().SendMessage(t.Context(), in); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
}

func TestReceiveTakesEveryMessageWithItsAttributes(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		s := Start(t)
		queueURL := s.NewQueue(t, fifo)
		group := ""
		if fifo {
			// One group: goaws hands out one message of a group at a time
			// until it is deleted, which Receive must do.
			group = "tenant-a"
		}
		mark := s.Mark()
		for _, body := range []string{"one", "two", "three"} {
			send(t, s, queueURL, body, group)
		}

		got := s.Receive(t, queueURL)
		if len(got) != 3 {
			t.Fatalf("fifo=%v: received %d messages, want 3", fifo, len(got))
		}
		for i, body := range []string{"one", "two", "three"} {
			attr := got[i].Attributes["lerian-event-id"]
			if got[i].Body != body || attr != (Attribute{DataType: "String", StringValue: "ev-" + body}) {
				t.Errorf("fifo=%v: message %d = %+v, want body %q with its attribute", fifo, i, got[i], body)
			}
		}
		if again := s.Receive(t, queueURL); len(again) != 0 {
			t.Errorf("fifo=%v: a second Receive returned %d messages, want none", fifo, len(again))
		}

		sent := s.Requests(mark, "SendMessage")
		if len(sent) != 3 {
			t.Fatalf("fifo=%v: %d SendMessage requests recorded, want 3", fifo, len(sent))
		}
		var req struct{ MessageBody, MessageGroupId string }
		if err := json.Unmarshal(sent[0].Body, &req); err != nil || req.MessageBody != "one" || req.MessageGroupId != group {
			t.Errorf("fifo=%v: first request %s (%v), want body one in group %q", fifo, sent[0].Body, err, group)
		}
	}
}

func TestMissingQueueIsAnError(t *testing.T) {
	s := Start(t)
	_, err := s.Client().GetQueueAttributes(t.Context(), &sqsapi.GetQueueAttributesInput{
		QueueUrl:       aws.String(s.MissingQueueURL()),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	if err == nil {
		t.Fatal("GetQueueAttributes of MissingQueueURL succeeded")
	}
}
