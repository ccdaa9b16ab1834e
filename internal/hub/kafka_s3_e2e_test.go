package hub_test

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKafkaEndToEnd takes an event through the hub to a topic of the
// cluster the hub consumes from (see sinks_e2e_test.go for the shape of
// these tests): the record is the event in CloudEvents binary mode, keyed
// by the tenant.
func TestKafkaEndToEnd(t *testing.T) {
	h := startHub(t, postedKey)
	const out = "hubctl-e2e-sink-out"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrCreateTopicsRequest()
	topic := kmsg.NewCreateTopicsRequestTopic()
	topic.Topic, topic.NumPartitions, topic.ReplicationFactor = out, 1, 1
	req.Topics = append(req.Topics, topic)
	resp, err := req.RequestWith(ctx, h.kafka.Client(t))
	if err != nil || len(resp.Topics) != 1 || kerr.ErrorForCode(resp.Topics[0].ErrorCode) != nil {
		t.Fatalf("create topic %s: %v %+v", out, err, resp)
	}
	sub := h.subscribe(subscription("orders-kafka", map[string]any{"type": "kafka", "brokers": strings.Split(h.brokers, ","), "topic": out}, []string{postedKey}, nil))

	eventID := h.produce(postedKey, jsonData)
	deliveryID := succeeded(t, h.settled(sub, 1), eventID, postedKey)
	records := h.kafka.Consume(t, ctx, out, 1)
	r := records[0]
	if string(r.Value) != jsonData || string(r.Key) != e2eTenant {
		t.Errorf("record key %q value %q, want the tenant and the event data byte for byte", r.Key, r.Value)
	}
	headers := map[string]string{}
	for _, h := range r.Headers {
		headers[h.Key] = string(h.Value)
	}
	if headers["ce_id"] != eventID || headers["ce_specversion"] != "1.0" {
		t.Errorf("ce_id %q, ce_specversion %q; want the event id and 1.0", headers["ce_id"], headers["ce_specversion"])
	}
	for name, want := range identity(eventID, postedKey, deliveryID) {
		if headers[name] != want {
			t.Errorf("header %s = %q, want %q", name, headers[name], want)
		}
	}
}

// TestS3EndToEnd takes an event through the hub to an S3-compatible store
// (gofakes3 on loopback): the object at the tenant's hour holds the event
// data, its metadata the identity, and reads never show the keys.
func TestS3EndToEnd(t *testing.T) {
	const keyID, secret = "AKIAE2ES3TEST0000001", "e2e/s3/secret/access/key/0123456789"
	server := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(server.Close)
	client := s3api.New(s3api.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(server.URL), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("reader", "reader-secret", ""), HTTPClient: server.Client(),
	})
	const bucket = "hubctl-e2e-events"
	if _, err := client.CreateBucket(t.Context(), &s3api.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	h := startHub(t, postedKey)
	sub := h.subscribe(subscription("orders-s3", map[string]any{
		"type": "s3", "bucket": bucket, "region": "us-east-1", "prefix": "events/", "endpoint": server.URL, "path_style": true,
		"access_key_id": keyID, "secret_access_key": secret,
	}, []string{postedKey}, nil))
	h.noSecrets(sub, keyID, secret)

	eventID := h.produce(postedKey, jsonData)
	deliveryID := succeeded(t, h.settled(sub, 1), eventID, postedKey)
	list, err := client.ListObjectsV2(t.Context(), &s3api.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil || len(list.Contents) != 1 {
		t.Fatalf("bucket holds %v (%v), want one object", list, err)
	}
	key := aws.ToString(list.Contents[0].Key)
	if !strings.HasPrefix(key, "events/"+e2eTenant+"/") || !strings.HasSuffix(key, "/"+eventID) {
		t.Errorf("object key %q, want events/%s/<yyyy>/<mm>/<dd>/<hh>/%s", key, e2eTenant, eventID)
	}
	object, err := client.GetObject(t.Context(), &s3api.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(object.Body)
	_ = object.Body.Close()
	if string(data) != jsonData {
		t.Errorf("object %q, want the event data %q byte for byte", data, jsonData)
	}
	for name, want := range identity(eventID, postedKey, deliveryID) {
		if object.Metadata[name] != want {
			t.Errorf("metadata %s = %q, want %q", name, object.Metadata[name], want)
		}
	}
}
