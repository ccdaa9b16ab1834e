// Package httprecord is an HTTP destination on loopback for tests: it keeps
// every request the code under test sends it and answers as the test says.
package httprecord

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Request is one request as it arrived.
type Request struct {
	At     time.Time
	Method string
	URI    string // the request line's target, query included
	Host   string
	Header http.Header
	Body   []byte
}

// Options say how the server answers.
type Options struct {
	// Respond answers each recorded request; n numbers it among the
	// recorded ones, from 1. Nil answers 204 No Content.
	Respond func(w http.ResponseWriter, r *http.Request, n int)
	// Unrecorded, when set, picks the requests answered 204 No Content
	// without being recorded or numbered, such as a webhook's
	// verification probe in a test that counts deliveries.
	Unrecorded func(r *http.Request) bool
}

// Server records what arrives; it is closed when the test ends.
type Server struct {
	*httptest.Server
	// NewConns counts the connections opened to it.
	NewConns atomic.Int64

	mu  sync.Mutex
	got []Request
}

// Start serves on a loopback port until the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if opts.Unrecorded != nil && opts.Unrecorded(r) {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		s.mu.Lock()
		s.got = append(s.got, Request{At: time.Now(), Method: r.Method, URI: r.RequestURI, Host: r.Host, Header: r.Header.Clone(), Body: body})
		n := len(s.got)
		s.mu.Unlock()
		if opts.Respond == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		opts.Respond(w, r, n)
	}))
	s.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.NewConns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// Requests returns what was recorded so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}
