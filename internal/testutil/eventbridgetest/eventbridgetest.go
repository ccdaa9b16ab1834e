// Package eventbridgetest is a local AWS EventBridge endpoint for tests and
// benchmarks: an HTTP server on 127.0.0.1 speaking the JSON 1.1 protocol of
// PutEvents and DescribeEventBus.
//
// It accepts only requests whose Signature Version 4 it recomputes itself
// from the configured credentials, for the events service in the configured
// region, so a test that passes proves the request was signed with them. It
// records the entries it is sent, and can be told to reject entries, answer
// PutEvents with an error, or hang.
package eventbridgetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// Config is what a Server accepts. Zero fields take the defaults below.
type Config struct {
	AccessKeyID     string // default "AKIAEVENTBRIDGETEST1"
	SecretAccessKey string // default "eventbridgetest/secret/access/key"
	Region          string // default "us-east-1"
	// Buses are the event buses that exist, for DescribeEventBus; default
	// just "default". PutEvents accepts entries for any bus.
	Buses []string
	// Now is the clock requests' signing times are held against; nil
	// means time.Now.
	Now func() time.Time
}

// Server is one local EventBridge, closed when the test ends.
type Server struct {
	cfg Config
	srv *httptest.Server
	// stop releases hanging requests when the test ends.
	stop chan struct{}

	mu       sync.Mutex
	requests int
	entries  []Entry
	reject   func(Entry) (code, message string)
	failure  *awsErrorAnswer
	hang     bool
}

// Entry is one PutEvents entry as the wire carried it.
type Entry struct {
	EventBusName string
	Source       string
	DetailType   string
	Detail       string
	Time         *float64 // epoch seconds; nil when the entry had none
}

type awsErrorAnswer struct {
	status        int
	code, message string
}

// New starts a server accepting cfg's credentials.
func New(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	if cfg.AccessKeyID == "" {
		cfg.AccessKeyID = "AKIAEVENTBRIDGETEST1"
	}
	if cfg.SecretAccessKey == "" {
		cfg.SecretAccessKey = "eventbridgetest/secret/access/key"
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.Buses == nil {
		cfg.Buses = []string{"default"}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, stop: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.srv.Close)
	// Cleanups run last-registered first: hanging handlers are released
	// before Close waits for them.
	tb.Cleanup(func() { close(s.stop) })
	return s
}

// URL is the server's base URL, the sink's "endpoint" override.
func (s *Server) URL() string { return s.srv.URL }

// Config is the server's configuration, defaults filled in.
func (s *Server) Config() Config { return s.cfg }

// RejectEntries makes PutEvents judge each entry with verdict: an empty
// code accepts it, any other is the entry's ErrorCode in a partial-failure
// answer (HTTP 200, FailedEntryCount > 0). nil accepts every entry.
func (s *Server) RejectEntries(verdict func(Entry) (code, message string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reject = verdict
}

// FailPutEvents makes every correctly signed PutEvents answer an AWS error:
// HTTP status, error code (X-Amzn-ErrorType and __type) and message. The
// entries are still recorded.
func (s *Server) FailPutEvents(status int, code, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failure = &awsErrorAnswer{status: status, code: code, message: message}
}

// Hang makes every later request, of any operation, wait without an answer
// until the client gives up or the test ends.
func (s *Server) Hang() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hang = true
}

// Requests is the number of HTTP requests received, answered or not.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Entries are the entries of every correctly signed PutEvents, in order,
// whatever the answer was.
func (s *Server) Entries() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.entries)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	hang := s.hang
	s.mu.Unlock()

	// Read first: the server notices a client hanging up only once the
	// body has been read.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		WriteError(w, http.StatusBadRequest, "SerializationException", "unreadable body")
		return
	}
	if hang {
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
		return
	}
	if err := VerifySigV4(r, body, s.cfg.AccessKeyID, s.cfg.SecretAccessKey, s.cfg.Region, "events", s.cfg.Now()); err != nil {
		WriteError(w, http.StatusForbidden, "InvalidSignatureException", err.Error())
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-amz-json-1.1" {
		WriteError(w, http.StatusBadRequest, "SerializationException", "content type "+ct)
		return
	}
	switch target := r.Header.Get("X-Amz-Target"); target {
	case "AWSEvents.PutEvents":
		s.putEvents(w, body)
	case "AWSEvents.DescribeEventBus":
		s.describeEventBus(w, body)
	default:
		WriteError(w, http.StatusBadRequest, "UnknownOperationException", "unknown target "+target)
	}
}

func (s *Server) putEvents(w http.ResponseWriter, body []byte) {
	var in struct{ Entries []Entry }
	if err := json.Unmarshal(body, &in); err != nil || len(in.Entries) == 0 {
		WriteError(w, http.StatusBadRequest, "ValidationException", "Entries are required")
		return
	}
	s.mu.Lock()
	s.entries = append(s.entries, in.Entries...)
	reject, failure := s.reject, s.failure
	s.mu.Unlock()
	if failure != nil {
		WriteError(w, failure.status, failure.code, failure.message)
		return
	}
	failed := 0
	results := make([]map[string]string, len(in.Entries))
	for i, e := range in.Entries {
		if reject != nil {
			if code, message := reject(e); code != "" {
				failed++
				results[i] = map[string]string{"ErrorCode": code, "ErrorMessage": message}
				continue
			}
		}
		results[i] = map[string]string{"EventId": fmt.Sprintf("11111111-2222-3333-4444-%012d", i)}
	}
	WriteJSON(w, map[string]any{"FailedEntryCount": failed, "Entries": results})
}

func (s *Server) describeEventBus(w http.ResponseWriter, body []byte) {
	var in struct{ Name string }
	if err := json.Unmarshal(body, &in); err != nil {
		WriteError(w, http.StatusBadRequest, "ValidationException", "bad body")
		return
	}
	if !slices.Contains(s.cfg.Buses, in.Name) {
		WriteError(w, http.StatusBadRequest, "ResourceNotFoundException", "Event bus "+in.Name+" does not exist.")
		return
	}
	WriteJSON(w, map[string]string{"Name": in.Name, "Arn": "arn:aws:events:" + s.cfg.Region + ":123456789012:event-bus/" + in.Name})
}

// WriteJSON writes a successful JSON 1.1 answer.
func WriteJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(v)
}

// WriteError writes an AWS JSON 1.1 error answer the SDK decodes into a
// smithy.APIError with this code and message.
func WriteError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": message})
}
