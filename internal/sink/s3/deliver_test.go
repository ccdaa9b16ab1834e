package s3

import (
	"context"

	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/sinktest"
)

// TestRetryOverwritesTheSameObject: a second attempt of one event writes
// the key the first wrote, so the bucket holds one object, the retry's.
func TestRetryOverwritesTheSameObject(t *testing.T) {
	f := startFakeS3(t)
	bucket := f.newBucket(t)
	s := sinktest.Open(t, NewType(Options{AllowPrivate: true}), object3(bucket, f.endpoint))
	first := sinktest.NewDelivery()
	retry := first
	retry.DeliveryID = sinktest.NewDelivery().DeliveryID
	for _, d := range []sink.Delivery{first, retry} {
		if out := s.Deliver(t.Context(), d); !out.OK || !strings.Contains(string(out.Response), ObjectKey("events/", d)) {
			t.Fatalf("Deliver = %+v, want OK with the key in the response", out)
		}
	}
	objects := f.objects(t, bucket)
	if len(objects) != 1 {
		t.Fatalf("the bucket holds %d objects, want 1", len(objects))
	}
	if got := objects[0].metadata[sink.AttrDeliveryID]; got != retry.DeliveryID {
		t.Errorf("stored delivery id %q, want the retry's %q", got, retry.DeliveryID)
	}
}

func TestProbeNamesAMissingBucket(t *testing.T) {
	f := startFakeS3(t)
	s := sinktest.Open(t, NewType(Options{AllowPrivate: true}), object3("no-such-bucket", f.endpoint))
	err := s.Probe(t.Context(), sink.ProbeRequest{Timeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), `bucket "no-such-bucket" does not exist`) {
		t.Fatalf("Probe = %v, want the missing bucket named", err)
	}
}

// TestCredentialsNeverInErrors: a server that quotes the request's
// Authorization header (the access key id) in its error answers gets
// them scrubbed from the recorded reasons.
func TestCredentialsNeverInErrors(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidAccessKeyId</Code><Message>key ` +
			r.Header.Get("Authorization") + ` secret ` + testSecret + ` refused</Message></Error>`))
	}))
	t.Cleanup(server.Close)
	s := sinktest.Open(t, NewType(Options{AllowPrivate: true}), object3("orders", server.URL))
	out := s.Deliver(t.Context(), sinktest.NewDelivery())
	probeErr := s.Probe(t.Context(), sink.ProbeRequest{Timeout: 5 * time.Second})
	if out.OK || probeErr == nil {
		t.Fatalf("Deliver = %+v, Probe = %v: want both refused", out, probeErr)
	}
	if !strings.Contains(out.Error, "InvalidAccessKeyId") || out.StatusCode != http.StatusForbidden {
		t.Errorf("Deliver = %+v, want the 403 and S3's code", out)
	}
	for what, text := range map[string]string{"Deliver error": out.Error, "Probe error": probeErr.Error(), "response": string(out.Response)} {
		if strings.Contains(text, testKeyID) || strings.Contains(text, testSecret) {
			t.Errorf("%s %q quotes a credential", what, text)
		}
	}
}

// fixedResolver answers every lookup with one address.
type fixedResolver netip.Addr

func (r fixedResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.Addr(r)}, nil
}

// TestAddressPolicy: an endpoint whose name resolves to a private address
// is refused at dial time.
func TestAddressPolicy(t *testing.T) {
	typ := NewType(Options{Resolver: fixedResolver(netip.MustParseAddr("169.254.169.254"))})
	s := sinktest.Open(t, typ, object3("orders", "http://s3.example.com"))
	out := s.Deliver(t.Context(), sinktest.NewDelivery())
	if out.OK || !strings.Contains(out.Error, "destination refused") {
		t.Fatalf("Deliver = %+v, want the destination refused", out)
	}
	if err := s.Probe(t.Context(), sink.ProbeRequest{Timeout: time.Second}); err == nil || !strings.Contains(err.Error(), "destination refused") {
		t.Fatalf("Probe = %v, want the destination refused", err)
	}
}
