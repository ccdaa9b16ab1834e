package eventbridgetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awseventbridge "github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"
)

const (
	testKeyID  = "AKIAEXAMPLEKEY123456"
	testSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
)

func newClient(s *Server, secret string) *awseventbridge.Client {
	return awseventbridge.New(awseventbridge.Options{
		Region:       s.Config().Region,
		Credentials:  credentials.NewStaticCredentialsProvider(s.Config().AccessKeyID, secret, ""),
		BaseEndpoint: aws.String(s.URL()),
		Retryer:      aws.NopRetryer{},
	})
}

func put(t *testing.T, c *awseventbridge.Client, sources ...string) (*awseventbridge.PutEventsOutput, error) {
	t.Helper()
	in := &awseventbridge.PutEventsInput{}
	for _, source := range sources {
		in.Entries = append(in.Entries, types.PutEventsRequestEntry{
			EventBusName: aws.String("orders"), Source: aws.String(source),
			DetailType: aws.String("transaction.posted"), Detail: aws.String(`{"n":1}`),
		})
	}
	return c.PutEvents(t.Context(), in)
}

func apiErrorCode(err error) string {
	if apiErr, ok := errors.AsType[smithy.APIError](err); ok {
		return apiErr.ErrorCode()
	}
	return ""
}

func TestServer(t *testing.T) {
	s := New(t, Config{AccessKeyID: testKeyID, SecretAccessKey: testSecret, Buses: []string{"orders"}})
	client := newClient(s, testSecret)

	out, err := put(t, client, "a", "b")
	if err != nil || out.FailedEntryCount != 0 || len(out.Entries) != 2 || aws.ToString(out.Entries[0].EventId) == "" {
		t.Fatalf("PutEvents = %+v, %v; want two accepted entries", out, err)
	}
	if got := s.Entries(); len(got) != 2 || got[0].Source != "a" || got[1].Detail != `{"n":1}` || got[0].EventBusName != "orders" {
		t.Fatalf("Entries = %+v, want both entries as sent", got)
	}

	s.RejectEntries(func(e Entry) (string, string) {
		if e.Source == "bad" {
			return "InternalFailure", "try again"
		}
		return "", ""
	})
	out, err = put(t, client, "good", "bad")
	if err != nil || out.FailedEntryCount != 1 || aws.ToString(out.Entries[0].EventId) == "" ||
		aws.ToString(out.Entries[1].ErrorCode) != "InternalFailure" || aws.ToString(out.Entries[1].ErrorMessage) != "try again" {
		t.Fatalf("PutEvents = %+v, %v; want the second entry rejected", out, err)
	}

	s.FailPutEvents(http.StatusBadRequest, "ThrottlingException", "Rate exceeded")
	if _, err := put(t, client, "a"); apiErrorCode(err) != "ThrottlingException" {
		t.Fatalf("PutEvents = %v, want ThrottlingException", err)
	}

	if _, err := client.DescribeEventBus(t.Context(), &awseventbridge.DescribeEventBusInput{Name: aws.String("orders")}); err != nil {
		t.Fatalf("DescribeEventBus(orders) = %v", err)
	}
	if _, err := client.DescribeEventBus(t.Context(), &awseventbridge.DescribeEventBusInput{Name: aws.String("nope")}); apiErrorCode(err) != "ResourceNotFoundException" {
		t.Fatalf("DescribeEventBus(nope) = %v, want ResourceNotFoundException", err)
	}
	before := len(s.Entries())
	if _, err := put(t, newClient(s, "another-secret"), "x"); apiErrorCode(err) != "InvalidSignatureException" {
		t.Fatalf("PutEvents signed with another secret = %v, want InvalidSignatureException", err)
	}
	if len(s.Entries()) != before {
		t.Fatal("an entry of a badly signed request was recorded")
	}
	if n := s.Requests(); n != 6 {
		t.Fatalf("Requests = %d, want 6", n)
	}
}

func TestHang(t *testing.T) {
	s := New(t, Config{})
	s.Hang()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err := newClient(s, s.Config().SecretAccessKey).DescribeEventBus(ctx, &awseventbridge.DescribeEventBusInput{Name: aws.String("default")})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("DescribeEventBus on a hanging server = %v, want the caller's deadline", err)
	}
}

// TestVerifierAgreesWithSDKSigner checks the verifier against the SDK's
// signer, so that a server rejecting everything could not pass for one
// that verifies.
func TestVerifierAgreesWithSDKSigner(t *testing.T) {
	body := []byte(`{"Name":"orders"}`)
	newRequest := func() *http.Request {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:4566/", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		req.Header.Set("X-Amz-Target", "AWSEvents.DescribeEventBus")
		return req
	}
	sign := func(req *http.Request, secret string) {
		hash := sha256.Sum256(body)
		creds := aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: secret}
		if err := v4.NewSigner().SignHTTP(t.Context(), creds, req, hex.EncodeToString(hash[:]), "events", "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	verify := func(req *http.Request, body []byte) error {
		return VerifySigV4(req, body, testKeyID, testSecret, "us-east-1", "events", time.Now())
	}

	good := newRequest()
	sign(good, testSecret)
	if err := verify(good, body); err != nil {
		t.Fatalf("a correctly signed request was rejected: %v", err)
	}
	if err := verify(good, []byte(`{"Name":"other"}`)); err == nil {
		t.Error("a tampered body was accepted")
	}
	if err := VerifySigV4(good, body, testKeyID, testSecret, "us-east-1", "events", time.Now().Add(time.Hour)); err == nil || !strings.Contains(err.Error(), "too long ago") {
		t.Errorf("a request signed an hour ago = %v, want refused", err)
	}
	retargeted := newRequest()
	sign(retargeted, testSecret)
	retargeted.Header.Set("X-Amz-Target", "AWSEvents.DeleteEventBus")
	if err := verify(retargeted, body); err == nil {
		t.Error("a tampered X-Amz-Target was accepted")
	}
	wrongKey := newRequest()
	sign(wrongKey, "not-the-secret")
	if err := verify(wrongKey, body); err == nil {
		t.Error("a request signed with another secret was accepted")
	}
}
