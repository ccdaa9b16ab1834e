package nats

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/sinktest"
	"github.com/hubctl/hubctl/internal/testutil/natstest"
)

// TestRetriedEventIsStoredOnce: a second attempt of one event (a new
// delivery id, the same event id) is acknowledged as a duplicate and the
// stream keeps one message.
func TestRetriedEventIsStoredOnce(t *testing.T) {
	stream := natstest.Connect(t).NewStream(t)
	s := sinktest.Open(t, NewType(Options{AllowPrivate: true}), map[string]any{"url": natstest.URL(), "subject": stream.Subject})
	first := sinktest.NewDelivery()
	retry := first
	retry.DeliveryID = sinktest.NewDelivery().DeliveryID

	var acks []publishAck
	for _, d := range []sink.Delivery{first, retry} {
		out := s.Deliver(t.Context(), d)
		if !out.OK {
			t.Fatalf("Deliver: %s", out.Error)
		}
		var ack publishAck
		if err := json.Unmarshal(out.Response, &ack); err != nil {
			t.Fatalf("response %q: %v", out.Response, err)
		}
		acks = append(acks, ack)
	}
	if acks[0].Duplicate || !acks[1].Duplicate || acks[0].Sequence != acks[1].Sequence || acks[0].Stream != stream.Name {
		t.Errorf("acks = %+v, want the retry acknowledged as a duplicate of the first in %s", acks, stream.Name)
	}
	msgs := stream.Messages(t)
	if len(msgs) != 1 {
		t.Fatalf("the stream holds %d messages, want 1", len(msgs))
	}
	if got := msgs[0].Header.Get(sink.AttrDeliveryID); got != first.DeliveryID {
		t.Errorf("stored delivery id %q, want the first attempt's %q", got, first.DeliveryID)
	}
}

// TestSubjectNoStreamCaptures: the probe and a delivery both fail, naming
// the subject, on a subject no stream captures; a stream capturing it by
// wildcard passes the probe.
func TestSubjectNoStreamCaptures(t *testing.T) {
	server := natstest.Connect(t)
	typ := NewType(Options{AllowPrivate: true})
	subject := natstest.UniqueSubject()
	s := sinktest.Open(t, typ, map[string]any{"url": natstest.URL(), "subject": subject})
	probe := sink.ProbeRequest{Timeout: 5 * time.Second}
	if err := s.Probe(t.Context(), probe); err == nil || !strings.Contains(err.Error(), subject) {
		t.Fatalf("Probe = %v, want a failure naming %s", err, subject)
	}
	if out := s.Deliver(t.Context(), sinktest.NewDelivery()); out.OK || !strings.Contains(out.Error, subject) {
		t.Fatalf("Deliver = %+v, want a failure naming %s", out, subject)
	}

	stream := server.NewStream(t, "<base>.orders.*")
	captured := strings.TrimSuffix(stream.Subjects[1], "*") + "created"
	s = sinktest.Open(t, typ, map[string]any{"url": natstest.URL(), "subject": captured})
	if err := s.Probe(t.Context(), probe); err != nil {
		t.Fatalf("Probe of %s captured by %s: %v", captured, stream.Subjects[1], err)
	}
}

// TestSinksShareOneConnection: sinks of one server and login share a
// connection, which closes with the last of them; another login gets its
// own.
func TestSinksShareOneConnection(t *testing.T) {
	stream := natstest.Connect(t).NewStream(t)
	typ := NewType(Options{AllowPrivate: true})
	open := func(credentials map[string]any) sink.Sink {
		object := map[string]any{"type": Name, "url": natstest.URL(), "subject": stream.Subject}
		if credentials != nil {
			object["credentials"] = credentials
		}
		raw, _ := json.Marshal(object)
		cfg, err := typ.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		s, err := typ.Open(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := open(nil), open(nil)
	other := open(map[string]any{"token": testToken})
	if a.(*natsSink).server != b.(*natsSink).server || a.(*natsSink).server == other.(*natsSink).server {
		t.Fatal("sinks of one login do not share a server, or another login shares it")
	}
	for _, s := range []sink.Sink{a, b} {
		if out := s.Deliver(t.Context(), sinktest.NewDelivery()); !out.OK {
			t.Fatalf("Deliver: %s", out.Error)
		}
	}
	conn := a.(*natsSink).server.conn
	_ = a.Close()
	if conn.IsClosed() {
		t.Fatal("closing one sink closed the connection another uses")
	}
	_ = b.Close()
	_ = other.Close()
	if !conn.IsClosed() {
		t.Fatal("the connection outlived its last sink")
	}
	if n := typ.servers.Len(); n != 0 {
		t.Fatalf("%d servers left after every sink closed", n)
	}
}

// TestReconnectsAfterTheConnectionDrops: a connection the server closed is
// replaced by the next attempt.
func TestReconnectsAfterTheConnectionDrops(t *testing.T) {
	stream := natstest.Connect(t).NewStream(t)
	s := sinktest.Open(t, NewType(Options{AllowPrivate: true}), map[string]any{"url": natstest.URL(), "subject": stream.Subject})
	if out := s.Deliver(t.Context(), sinktest.NewDelivery()); !out.OK {
		t.Fatalf("Deliver: %s", out.Error)
	}
	s.(*natsSink).server.conn.Close()
	if out := s.Deliver(t.Context(), sinktest.NewDelivery()); !out.OK {
		t.Fatalf("Deliver after the connection closed: %s", out.Error)
	}
	if n := len(stream.Messages(t)); n != 2 {
		t.Fatalf("the stream holds %d messages, want 2", n)
	}
}

// refusingServer speaks enough of the NATS protocol to ask for
// authentication and refuse it, recording each CONNECT it was sent.
func refusingServer(t *testing.T) (addr string, connects func() []string) {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = listener.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
				_, _ = conn.Write([]byte(`INFO {"server_id":"fake","version":"2.10.0","proto":1,"max_payload":1048576,"headers":true,"auth_required":true}` + "\r\n"))
				line, _ := bufio.NewReader(conn).ReadString('\n')
				mu.Lock()
				got = append(got, line)
				mu.Unlock()
				_, _ = conn.Write([]byte("-ERR 'Authorization Violation'\r\n"))
			})
		}
	})
	return listener.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// TestCredentialsNeverInErrors: each kind of login reaches the server,
// and what the refusal makes of it (deliver and probe errors) names none
// of the secret.
func TestCredentialsNeverInErrors(t *testing.T) {
	creds, seed := testCreds(t)
	for _, tc := range []struct {
		name        string
		credentials map[string]any
		secret      string
		sent        string // what the CONNECT line carries
	}{
		{"token", map[string]any{"token": testToken}, testToken, `"auth_token":"` + testToken + `"`},
		{"password", map[string]any{"username": "bob", "password": testPassword}, testPassword, `"pass":"` + testPassword + `"`},
		{"credentials file", map[string]any{"creds": creds}, seed, `"jwt":"eyJ0eXAi`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, connects := refusingServer(t)
			s := sinktest.Open(t, NewType(Options{AllowPrivate: true}), map[string]any{"url": "nats://" + addr, "subject": "a", "credentials": tc.credentials})
			out := s.Deliver(t.Context(), sinktest.NewDelivery())
			probeErr := s.Probe(t.Context(), sink.ProbeRequest{Timeout: 5 * time.Second})
			if out.OK || probeErr == nil {
				t.Fatalf("Deliver = %+v, Probe = %v: want both refused", out, probeErr)
			}
			for what, text := range map[string]string{"Deliver error": out.Error, "Probe error": probeErr.Error()} {
				if !strings.Contains(text, "refused the credentials") {
					t.Errorf("%s %q does not say the credentials were refused", what, text)
				}
				for _, secret := range []string{tc.secret, testToken, testPassword, seed} {
					if strings.Contains(text, secret) {
						t.Errorf("%s %q quotes a credential", what, text)
					}
				}
			}
			sent := connects()
			if len(sent) == 0 || !strings.Contains(sent[0], tc.sent) {
				t.Errorf("CONNECT lines %q do not carry %s", sent, tc.sent)
			}
		})
	}
}

// fixedResolver answers every lookup with one address.
type fixedResolver netip.Addr

func (r fixedResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.Addr(r)}, nil
}

// TestAddressPolicy: a server name that resolves to a private address is
// refused at dial time, before any connection is attempted.
func TestAddressPolicy(t *testing.T) {
	dialled := false
	typ := NewType(Options{
		Resolver: fixedResolver(netip.MustParseAddr("10.0.0.7")),
		Dial: func(context.Context, string, string) (net.Conn, error) {
			dialled = true
			return nil, net.ErrClosed
		},
	})
	s := sinktest.Open(t, typ, map[string]any{"url": "nats://nats.example.com", "subject": "a"})
	out := s.Deliver(t.Context(), sinktest.NewDelivery())
	if out.OK || !strings.Contains(out.Error, "destination refused") {
		t.Fatalf("Deliver = %+v, want the destination refused", out)
	}
	if err := s.Probe(t.Context(), sink.ProbeRequest{Timeout: time.Second}); err == nil || !strings.Contains(err.Error(), "destination refused") {
		t.Fatalf("Probe = %v, want the destination refused", err)
	}
	if dialled {
		t.Fatal("a refused address was dialled")
	}
}
