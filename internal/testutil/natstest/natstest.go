// Package natstest connects tests to the real NATS server with JetStream
// they publish to, and gives each a stream of its own.
//
// The server is nats://127.0.0.1:4222 unless HUBCTL_TEST_NATS_URL names
// another. It is shared by every test process on the machine: tests only
// ever create and delete streams of their own ([Server.NewStream] makes
// their names and subjects unique), and never stop or purge the server.
// Without a server, tests fail when CI=true and are skipped otherwise.
package natstest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// EnvURL names the server to test against, as a nats:// URL.
const EnvURL = "HUBCTL_TEST_NATS_URL"

const (
	defaultURL  = "nats://127.0.0.1:4222"
	dialTimeout = 3 * time.Second
	// namePrefix starts every stream a test creates, so that what a killed
	// test left behind is recognisable on the shared server.
	namePrefix = "hubctl-test-"
	// startCommand is how this machine's server is started.
	startCommand = "start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- " +
		"-a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log"
)

// URL is the test server's URL.
func URL() string {
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	return defaultURL
}

// Server is a connection to the test server for setting up and reading
// back streams, outside any sink under test. It is closed when the test
// ends.
type Server struct {
	Conn *natsgo.Conn
	JS   jetstream.JetStream
}

// Connect connects to the test server and checks that it runs JetStream.
// Without one it fails the test under CI=true and skips it otherwise,
// saying how to start one.
func Connect(tb testing.TB) *Server {
	tb.Helper()
	unavailable := func(err error) {
		msg := fmt.Sprintf("no NATS server with JetStream at %s (%v); start it with `%s` or set %s", URL(), err, startCommand, EnvURL)
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	conn, err := natsgo.Connect(URL(), natsgo.Timeout(dialTimeout), natsgo.NoReconnect(), natsgo.Name("hubctl-test"))
	if err != nil {
		unavailable(err)
	}
	tb.Cleanup(conn.Close)
	js, err := jetstream.New(conn)
	if err != nil {
		tb.Fatalf("natstest: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	if _, err := js.AccountInfo(ctx); err != nil {
		unavailable(err)
	}
	return &Server{Conn: conn, JS: js}
}

// Stream is a stream of one test, capturing its subjects.
type Stream struct {
	server *Server
	Name   string
	// Subject is the one subject the stream captures; Subjects all it
	// captures (Subject first).
	Subject  string
	Subjects []string
}

// NewStream creates a stream capturing a unique subject, plus any more
// subjects given ("<base>" in them is replaced by the stream's unique
// base, as in "<base>.*"), with JetStream's default duplicate window. It is
// deleted when the test ends.
func (s *Server) NewStream(tb testing.TB, more ...string) *Stream {
	tb.Helper()
	base := strings.ReplaceAll(namePrefix+uuid.NewString(), "-", "_")
	st := &Stream{server: s, Name: base, Subject: base + ".events"}
	st.Subjects = []string{st.Subject}
	for _, m := range more {
		st.Subjects = append(st.Subjects, strings.ReplaceAll(m, "<base>", base))
	}
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	if _, err := s.JS.CreateStream(ctx, jetstream.StreamConfig{
		Name: st.Name, Subjects: st.Subjects, Storage: jetstream.MemoryStorage, MaxAge: time.Hour,
	}); err != nil {
		tb.Fatalf("natstest: create stream: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
		defer cancel()
		// A test may have deleted it itself.
		if err := s.JS.DeleteStream(ctx, st.Name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			tb.Errorf("natstest: delete stream %s: %v", st.Name, err)
		}
	})
	return st
}

// UniqueSubject is a subject no stream captures.
func UniqueSubject() string {
	return strings.ReplaceAll(namePrefix+uuid.NewString(), "-", "_") + ".nowhere"
}

// Messages are every message the stream holds, in order.
func (st *Stream) Messages(tb testing.TB) []*jetstream.RawStreamMsg {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	stream, err := st.server.JS.Stream(ctx, st.Name)
	if err != nil {
		tb.Fatalf("natstest: stream %s: %v", st.Name, err)
	}
	info := stream.CachedInfo()
	var msgs []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		msg, err := stream.GetMsg(ctx, seq)
		if err != nil {
			tb.Fatalf("natstest: message %d of %s: %v", seq, st.Name, err)
		}
		msgs = append(msgs, msg)
	}
	return msgs
}
