package s3

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/hubctl/hubctl/internal/clip"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/awsclient"
)

const (
	// MaxKeyBytes is S3's limit on an object key.
	MaxKeyBytes = 1024
	// maxMetadataBytes is S3's limit on user metadata: every key and
	// value, UTF-8 encoded.
	maxMetadataBytes = 2 << 10
)

// bucketSink is one subscription's bucket and prefix.
type bucketSink struct {
	client *s3api.Client
	bucket string
	prefix string
	// creds are scrubbed from every error text.
	creds awsclient.Credentials
}

// putResult is what a successful put records as the response: the key
// written and S3's own names for what it answered.
type putResult struct {
	Key       string `json:"Key"`
	ETag      string `json:"ETag,omitempty"`
	VersionID string `json:"VersionId,omitempty"`
}

// ObjectKey is where an event is written: <prefix><tenant>/<yyyy>/<mm>/
// <dd>/<hh>/<event id>, the hour of the event's time in UTC. It depends on
// nothing that changes between attempts, so a retry overwrites the object
// an earlier attempt may have written.
func ObjectKey(prefix string, d sink.Delivery) string {
	return prefix + d.TenantID + "/" + d.Time.UTC().Format("2006/01/02/15") + "/" + d.EventID
}

// buildPut is the PutObject request of one delivery, or why S3 could not
// take it; the reason is final for this event.
func buildPut(bucket, prefix string, d sink.Delivery) (*s3api.PutObjectInput, error) {
	key := ObjectKey(prefix, d)
	if len(key) > MaxKeyBytes {
		return nil, fmt.Errorf("object key too long for S3: %d bytes, the limit is %d", len(key), MaxKeyBytes)
	}
	// The object metadata is sink.Attributes (docs/concepts.md, Sinks), as
	// S3 user metadata (x-amz-meta-lerian-event-id, …).
	metadata := map[string]string{}
	size := 0
	for _, attr := range sink.Attributes(d) {
		// Metadata travels as HTTP headers: printable ASCII only.
		if strings.ContainsFunc(attr.Value, func(r rune) bool { return r > unicode.MaxASCII || unicode.IsControl(r) }) {
			return nil, fmt.Errorf("metadata %s has characters an S3 header cannot carry", attr.Name)
		}
		metadata[attr.Name] = attr.Value
		size += len(attr.Name) + len(attr.Value)
	}
	if size > maxMetadataBytes {
		return nil, fmt.Errorf("object metadata too large for S3: %d bytes, the limit is %d", size, maxMetadataBytes)
	}
	return &s3api.PutObjectInput{
		Bucket:        aws.String(bucket),
		Key:           aws.String(key),
		Body:          bytes.NewReader(d.Payload),
		ContentLength: aws.Int64(int64(len(d.Payload))),
		ContentType:   aws.String(d.ContentType()),
		Metadata:      metadata,
	}, nil
}

// Deliver makes one PutObject within d.Timeout and reports it.
func (s *bucketSink) Deliver(ctx context.Context, d sink.Delivery) sink.Outcome {
	input, err := buildPut(s.bucket, s.prefix, d)
	if err != nil {
		return sink.Outcome{Error: err.Error(), NotSent: true}
	}
	timeout := sink.AttemptTimeout(d.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := s.client.PutObject(ctx, input)
	if err != nil {
		status, reason := awsclient.DescribeError("S3", s.creds, ctx, err, timeout)
		return sink.Outcome{StatusCode: status, Error: reason}
	}
	response, _ := json.Marshal(putResult{Key: *input.Key, ETag: aws.ToString(out.ETag), VersionID: aws.ToString(out.VersionId)})
	return sink.Outcome{OK: true, StatusCode: awsclient.ResponseStatus(out.ResultMetadata), Response: clipResponse(response)}
}

// clipResponse keeps a recorded response within sink.MaxResponseBytes.
func clipResponse(b []byte) []byte {
	if len(b) <= sink.MaxResponseBytes {
		return b
	}
	return []byte(clip.String(string(b), sink.MaxResponseBytes))
}

// Probe asks for the bucket with the subscription's credentials
// (HeadBucket): it proves the bucket exists and the key may reach it, and
// writes nothing.
func (s *bucketSink) Probe(ctx context.Context, p sink.ProbeRequest) error {
	timeout := sink.AttemptTimeout(p.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := s.client.HeadBucket(ctx, &s3api.HeadBucketInput{Bucket: aws.String(s.bucket)}); err != nil {
		status, reason := awsclient.DescribeError("S3", s.creds, ctx, err, timeout)
		switch status {
		case http.StatusNotFound:
			reason = "bucket " + strconv.Quote(s.bucket) + " does not exist (" + reason + ")"
		case http.StatusForbidden:
			reason = "the credentials may not use bucket " + strconv.Quote(s.bucket) + " (" + reason + ")"
		}
		return errors.New(reason)
	}
	return nil
}

// Close does nothing: the client belongs to the Type's cache and its
// connections to the Type's transport, both shared with other sinks.
func (s *bucketSink) Close() error { return nil }
