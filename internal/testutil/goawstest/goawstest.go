// Package goawstest runs an in-process goaws v0.5.4 (an SQS emulator) on
// 127.0.0.1 for tests and benchmarks: create queues, read back what arrived
// with its message attributes, and see the requests goaws was sent.
//
// goaws keeps its queues in package globals, so a test binary runs one
// server, started on first use and left running until the binary exits.
// Tests share it safely by using queues of their own: [Server.NewQueue]
// names them uniquely and deletes them when the test ends.
package goawstest

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/Admiral-Piett/goaws/app/models"
	"github.com/Admiral-Piett/goaws/app/router"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sqsapi "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
)

const (
	// Region is what clients of the server sign for; goaws accepts any.
	Region = "us-east-1"
	// AccountID is the account in every queue URL.
	AccountID = "100010001000"
	// fifoSuffix ends the name of every FIFO queue.
	fifoSuffix = ".fifo"
)

// Server is the test binary's goaws.
type Server struct {
	endpoint string
	admin    *sqsapi.Client

	mu       sync.Mutex
	requests []Request
}

// Request is one request goaws received.
type Request struct {
	// Action is the operation named by X-Amz-Target, e.g. "SendMessage".
	Action string
	// Body is the JSON request body as sent.
	Body []byte
}

// Message is one message read back from a queue.
type Message struct {
	Body       string
	Attributes map[string]Attribute
}

// Attribute is one message attribute.
type Attribute struct {
	DataType    string // "String", "Number" or "Binary"
	StringValue string
}

var (
	startOnce sync.Once
	started   *Server
	startErr  error
)

// Start returns the shared server, starting it on first use the way goaws's
// own main does: configure models.CurrentEnvironment, then serve
// router.New().
func Start(tb testing.TB) *Server {
	tb.Helper()
	startOnce.Do(func() { started, startErr = start() })
	if startErr != nil {
		tb.Fatalf("goawstest: starting goaws: %v", startErr)
	}
	return started
}

func start() (*Server, error) {
	// goaws logs every request at info level; a benchmark would drown.
	logrus.SetLevel(logrus.FatalLevel)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := listener.Addr().(*net.TCPAddr).Port
	// Queue URLs are built from these; an empty Region keeps the host a
	// bare 127.0.0.1. EnableDuplicates turns on FIFO deduplication.
	models.CurrentEnvironment = models.Environment{
		Host:             "127.0.0.1",
		Port:             strconv.Itoa(port),
		AccountID:        AccountID,
		EnableDuplicates: true,
	}
	srv := &Server{endpoint: "http://" + listener.Addr().String()}
	handler := router.New()
	go func() {
		_ = http.Serve(listener, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			srv.record(r)
			handler.ServeHTTP(w, r)
		}))
	}()
	srv.admin = sqsapi.New(sqsapi.Options{
		Region:       Region,
		Credentials:  credentials.NewStaticCredentialsProvider("goawstest-admin", "goawstest-admin-secret", ""),
		BaseEndpoint: aws.String(srv.endpoint),
	})
	return srv, nil
}

// record keeps the request and puts its body back for goaws.
func (s *Server) record(r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	target := r.Header.Get("X-Amz-Target")
	s.mu.Lock()
	s.requests = append(s.requests, Request{Action: target[strings.LastIndexByte(target, '.')+1:], Body: body})
	s.mu.Unlock()
}

// Endpoint is the server's base URL, the sink's "endpoint" override.
func (s *Server) Endpoint() string { return s.endpoint }

// Client is an SQS client of the server, for what a helper does not cover.
func (s *Server) Client() *sqsapi.Client { return s.admin }

// CreateQueue makes a queue with exactly this name (".fifo" at the end
// makes a FIFO queue) and returns its URL. It is left in place: prefer
// NewQueue, unless the name itself matters to the test.
func (s *Server) CreateQueue(tb testing.TB, name string) string {
	tb.Helper()
	out, err := s.admin.CreateQueue(tb.Context(), &sqsapi.CreateQueueInput{QueueName: aws.String(name)})
	if err != nil {
		tb.Fatalf("goawstest: CreateQueue %s: %v", name, err)
	}
	return aws.ToString(out.QueueUrl)
}

// NewQueue makes a queue of the test's own, FIFO or standard, and deletes
// it when the test ends. It returns the queue's URL.
func (s *Server) NewQueue(tb testing.TB, fifo bool) string {
	tb.Helper()
	name := "hubctl-test-" + uuid.NewString()
	if fifo {
		name += fifoSuffix
	}
	queueURL := s.CreateQueue(tb, name)
	tb.Cleanup(func() {
		// The test's context is gone by now.
		_, _ = s.admin.DeleteQueue(context.Background(), &sqsapi.DeleteQueueInput{QueueUrl: aws.String(queueURL)})
	})
	return queueURL
}

// MissingQueueURL is the URL of a queue that does not exist on the server.
func (s *Server) MissingQueueURL() string {
	return s.endpoint + "/" + AccountID + "/hubctl-test-missing-" + uuid.NewString()
}

// Receive takes every message waiting in a queue, oldest first: it reads
// them with their attributes and deletes them, so a later call sees only
// newer messages and a FIFO queue releases its message groups. It does not
// wait for messages still to come.
func (s *Server) Receive(tb testing.TB, queueURL string) []Message {
	tb.Helper()
	var msgs []Message
	for {
		out, err := s.admin.ReceiveMessage(tb.Context(), &sqsapi.ReceiveMessageInput{
			QueueUrl:              aws.String(queueURL),
			MaxNumberOfMessages:   10,
			MessageAttributeNames: []string{"All"},
		})
		if err != nil {
			tb.Fatalf("goawstest: ReceiveMessage: %v", err)
		}
		if len(out.Messages) == 0 {
			return msgs
		}
		for _, m := range out.Messages {
			attrs := make(map[string]Attribute, len(m.MessageAttributes))
			for name, v := range m.MessageAttributes {
				attrs[name] = Attribute{DataType: aws.ToString(v.DataType), StringValue: aws.ToString(v.StringValue)}
			}
			msgs = append(msgs, Message{Body: aws.ToString(m.Body), Attributes: attrs})
			if _, err := s.admin.DeleteMessage(tb.Context(), &sqsapi.DeleteMessageInput{
				QueueUrl: aws.String(queueURL), ReceiptHandle: m.ReceiptHandle,
			}); err != nil {
				tb.Fatalf("goawstest: DeleteMessage: %v", err)
			}
		}
	}
}

// Mark is the number of requests received so far; pass it to Requests to
// see only what came after. Requests are kept for the life of the test
// binary, bodies included.
func (s *Server) Mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Requests returns the requests received since mark, in order, with the
// given action only ("SendMessage") or all of them ("").
func (s *Server) Requests(mark int, action string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests[mark:] {
		if action == "" || r.Action == action {
			out = append(out, r)
		}
	}
	return out
}
