package s3

import (
	"context"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/uuid"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/sinktest"
)

const (
	testKeyID  = "AKIAS3TESTKEY0000001"
	testSecret = "s3/test/secret/access/key/0123456789"
	testRegion = "us-east-1"
)

// s3Identity maps the object metadata (docs/concepts.md, Sinks) to the
// suite's attributes; the SDK reads metadata keys back lowercased.
var s3Identity = map[string]sinktest.Field{
	sink.AttrEventID:       sinktest.EventID,
	sink.AttrDeliveryID:    sinktest.DeliveryID,
	sink.AttrTenantID:      sinktest.TenantID,
	sink.AttrEventType:     sinktest.EventKey,
	sink.AttrSchemaVersion: sinktest.SchemaVersion,
	sink.AttrTraceParent:   sinktest.TraceParent,
	sink.AttrTraceState:    sinktest.TraceState,
}

// fakeS3 is an in-process S3-compatible server on loopback.
type fakeS3 struct {
	endpoint string
	client   *s3api.Client // reads back what sinks wrote
}

func startFakeS3(t *testing.T) *fakeS3 {
	t.Helper()
	server := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(server.Close)
	client := s3api.New(s3api.Options{
		Region:       testRegion,
		BaseEndpoint: aws.String(server.URL),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider("reader", "reader-secret", ""),
		HTTPClient:   server.Client(),
	})
	return &fakeS3{endpoint: server.URL, client: client}
}

// newBucket creates a bucket of a unique name.
func (f *fakeS3) newBucket(t *testing.T) string {
	t.Helper()
	bucket := "hubctl-" + uuid.NewString()
	if _, err := f.client.CreateBucket(t.Context(), &s3api.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	return bucket
}

// object is one stored object as read back.
type object struct {
	key         string
	body        []byte
	contentType string
	metadata    map[string]string
}

// objects reads back every object of a bucket.
func (f *fakeS3) objects(t testing.TB, bucket string) []object {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := f.client.ListObjectsV2(ctx, &s3api.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatalf("list %s: %v", bucket, err)
	}
	var out []object
	for _, entry := range list.Contents {
		got, err := f.client.GetObject(ctx, &s3api.GetObjectInput{Bucket: aws.String(bucket), Key: entry.Key})
		if err != nil {
			t.Fatalf("get %s: %v", aws.ToString(entry.Key), err)
		}
		body, err := io.ReadAll(got.Body)
		_ = got.Body.Close()
		if err != nil {
			t.Fatalf("read %s: %v", aws.ToString(entry.Key), err)
		}
		out = append(out, object{key: aws.ToString(entry.Key), body: body, contentType: aws.ToString(got.ContentType), metadata: got.Metadata})
	}
	return out
}

func object3(bucket, endpoint string) map[string]any {
	obj := map[string]any{
		"bucket": bucket, "region": testRegion, "prefix": "events/",
		"access_key_id": testKeyID, "secret_access_key": testSecret,
	}
	if endpoint != "" {
		obj["endpoint"], obj["path_style"] = endpoint, true
	}
	return obj
}

func TestConformance(t *testing.T) {
	typ := NewType(Options{AllowPrivate: true})
	t.Cleanup(typ.CloseIdleConnections)
	at := func(t *testing.T, addr string) sink.Sink {
		return sinktest.Open(t, typ, object3("orders", "http://"+addr))
	}
	otherKeys := object3("orders", "")
	otherKeys["access_key_id"], otherKeys["secret_access_key"] = "AKIAOTHERKEY00000002", "another/secret/access/key"

	sinktest.Run(t, sinktest.Harness{
		Type:             typ,
		Object:           object3("orders", ""),
		SameDestination:  otherKeys,
		OtherDestination: object3("invoices", ""),
		Credentials:      []string{testKeyID, testSecret},
		Carries:          []sinktest.Field{sinktest.DataContentType, sinktest.TraceParent, sinktest.TraceState},

		Working: func(t *testing.T) (sink.Sink, sinktest.Inbox) {
			f := startFakeS3(t)
			bucket := f.newBucket(t)
			return sinktest.Open(t, typ, object3(bucket, f.endpoint)), func(t testing.TB) []sinktest.Message {
				var msgs []sinktest.Message
				for _, o := range f.objects(t, bucket) {
					msgs = append(msgs, inboxMessage(t, o))
				}
				return msgs
			}
		},
		Failing: func(t *testing.T) sink.Sink {
			f := startFakeS3(t)
			return sinktest.Open(t, typ, object3("no-such-bucket", f.endpoint))
		},
		Hanging:     func(t *testing.T) sink.Sink { return at(t, sinktest.NewBlackhole(t).Addr()) },
		Unreachable: func(t *testing.T) sink.Sink { return at(t, sinktest.ClosedAddr(t)) },
	})
}

// inboxMessage normalises a stored object for the suite, checking its key
// against the event it holds.
func inboxMessage(t testing.TB, o object) sinktest.Message {
	t.Helper()
	identity := map[sinktest.Field]string{}
	for name, field := range s3Identity {
		if value, ok := o.metadata[name]; ok {
			identity[field] = value
		}
	}
	if o.contentType != "" {
		identity[sinktest.DataContentType] = o.contentType
	}
	d := sinktest.NewDelivery()
	d.TenantID, d.EventID = identity[sinktest.TenantID], identity[sinktest.EventID]
	if want := ObjectKey("events/", d); o.key != want {
		t.Errorf("object key %q, want %q", o.key, want)
	}
	return sinktest.Message{Body: o.body, Identity: identity}
}
