package eventbridge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeEventBridge is a loopback EventBridge speaking the JSON 1.1 protocol.
// It accepts only requests whose SigV4 signature it recomputes itself from
// the configured credentials, so a test that passes proves the request was
// signed with them, for the events service in the configured region.
type fakeEventBridge struct {
	accessKeyID string
	secretKey   string
	region      string
	buses       []string // known bus names

	mu sync.Mutex
	// putEvents answers PutEvents after the request was checked; nil means
	// every entry is accepted.
	putEvents func(w http.ResponseWriter, entries []putEntry)
	// hang makes every request wait for the client to give up.
	hang bool
	// stop releases hanging requests when the test ends.
	stop     chan struct{}
	requests int
	received []putEntry
}

// putEntry is a PutEvents entry as the wire carries it.
type putEntry struct {
	EventBusName string
	Source       string
	DetailType   string
	Detail       string
	Time         *float64 // epoch seconds
}

func newFakeEventBridge(t *testing.T, f *fakeEventBridge) *httptest.Server {
	t.Helper()
	f.stop = make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	// Cleanups run last-registered first: hanging handlers are released
	// before Close waits for them.
	t.Cleanup(func() { close(f.stop) })
	return srv
}

func (f *fakeEventBridge) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests++
	hang := f.hang
	f.mu.Unlock()

	// Read first: the server notices a client hanging up only once the
	// body has been read.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		awsError(w, http.StatusBadRequest, "SerializationException", "unreadable body")
		return
	}
	if hang {
		select {
		case <-r.Context().Done():
		case <-f.stop:
		}
		return
	}
	if err := verifySigV4(r, body, f.accessKeyID, f.secretKey, f.region, "events", time.Now()); err != nil {
		awsError(w, http.StatusForbidden, "InvalidSignatureException", err.Error())
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-amz-json-1.1" {
		awsError(w, http.StatusBadRequest, "SerializationException", "content type "+ct)
		return
	}
	switch target := r.Header.Get("X-Amz-Target"); target {
	case "AWSEvents.PutEvents":
		var in struct{ Entries []putEntry }
		if err := json.Unmarshal(body, &in); err != nil || len(in.Entries) == 0 {
			awsError(w, http.StatusBadRequest, "ValidationException", "Entries are required")
			return
		}
		f.mu.Lock()
		f.received = append(f.received, in.Entries...)
		answer := f.putEvents
		f.mu.Unlock()
		if answer != nil {
			answer(w, in.Entries)
			return
		}
		results := make([]map[string]string, len(in.Entries))
		for i := range results {
			results[i] = map[string]string{"EventId": fmt.Sprintf("11111111-2222-3333-4444-%012d", i)}
		}
		awsJSON(w, map[string]any{"FailedEntryCount": 0, "Entries": results})
	case "AWSEvents.DescribeEventBus":
		var in struct{ Name string }
		if err := json.Unmarshal(body, &in); err != nil {
			awsError(w, http.StatusBadRequest, "ValidationException", "bad body")
			return
		}
		if !slices.Contains(f.buses, in.Name) {
			awsError(w, http.StatusBadRequest, "ResourceNotFoundException", "Event bus "+in.Name+" does not exist.")
			return
		}
		awsJSON(w, map[string]string{"Name": in.Name, "Arn": "arn:aws:events:" + f.region + ":123456789012:event-bus/" + in.Name})
	default:
		awsError(w, http.StatusBadRequest, "UnknownOperationException", "unknown target "+target)
	}
}

func (f *fakeEventBridge) snapshot() (requests int, received []putEntry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests, slices.Clone(f.received)
}

func awsJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(v)
}

func awsError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": message})
}

// verifySigV4 recomputes the AWS Signature Version 4 of a received request
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html)
// and compares it with the one it carries. It is written from the
// specification rather than with the SDK's signer, so a fault in the
// signing the sink relies on cannot hide itself.
func verifySigV4(r *http.Request, body []byte, accessKeyID, secretKey, region, service string, now time.Time) error {
	const algorithm = "AWS4-HMAC-SHA256"
	auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), algorithm+" ")
	if !ok {
		return errors.New("missing or non-SigV4 Authorization")
	}
	parts := map[string]string{}
	for item := range strings.SplitSeq(auth, ",") {
		key, value, _ := strings.Cut(strings.TrimSpace(item), "=")
		parts[key] = value
	}
	credential := strings.Split(parts["Credential"], "/")
	if len(credential) != 5 || credential[4] != "aws4_request" {
		return errors.New("malformed Credential")
	}
	if credential[0] != accessKeyID {
		return errors.New("unknown access key")
	}
	date, scopeRegion, scopeService := credential[1], credential[2], credential[3]
	if scopeRegion != region || scopeService != service {
		return fmt.Errorf("scope %s/%s, want %s/%s", scopeRegion, scopeService, region, service)
	}
	amzDate := r.Header.Get("X-Amz-Date")
	signedAt, err := time.Parse("20060102T150405Z", amzDate)
	if err != nil || !strings.HasPrefix(amzDate, date) {
		return errors.New("bad X-Amz-Date")
	}
	if skew := now.Sub(signedAt); skew > 5*time.Minute || skew < -5*time.Minute {
		return errors.New("request signed too long ago")
	}
	signedHeaders := strings.Split(parts["SignedHeaders"], ";")
	for _, required := range []string{"host", "x-amz-date", "x-amz-target", "content-type"} {
		if !slices.Contains(signedHeaders, required) {
			return fmt.Errorf("%s is not signed", required)
		}
	}

	var canonicalHeaders strings.Builder
	for _, name := range signedHeaders {
		var values []string
		switch name {
		case "host":
			values = []string{r.Host}
		case "content-length":
			values = []string{fmt.Sprint(r.ContentLength)}
		default:
			values = r.Header.Values(name)
		}
		for i, v := range values {
			values[i] = strings.Join(strings.Fields(v), " ")
		}
		canonicalHeaders.WriteString(name + ":" + strings.Join(values, ",") + "\n")
	}
	bodyHash := sha256.Sum256(body)
	canonicalRequest := strings.Join([]string{
		r.Method,
		r.URL.EscapedPath(),
		r.URL.RawQuery,
		canonicalHeaders.String(),
		parts["SignedHeaders"],
		hex.EncodeToString(bodyHash[:]),
	}, "\n")
	requestHash := sha256.Sum256([]byte(canonicalRequest))
	scope := date + "/" + region + "/" + service + "/aws4_request"
	stringToSign := algorithm + "\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(requestHash[:])

	key := []byte("AWS4" + secretKey)
	for _, step := range []string{date, region, service, "aws4_request"} {
		key = hmacSHA256(key, step)
	}
	want := hex.EncodeToString(hmacSHA256(key, stringToSign))
	if !hmac.Equal([]byte(want), []byte(parts["Signature"])) {
		return errors.New("The request signature we calculated does not match the signature you provided.")
	}
	return nil
}

func hmacSHA256(key []byte, message string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(message))
	return mac.Sum(nil)
}
