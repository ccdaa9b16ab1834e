package rabbitmq

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hubctl/hubctl/internal/sink"
)

// secretPassword stands for a tenant's broker password; it may appear in
// Credentials and nowhere else.
const secretPassword = "hunter2-s3cret"

func TestParse(t *testing.T) {
	longName := strings.Repeat("x", maxShortString+1)
	tests := []struct {
		name         string
		raw          string
		allowPrivate bool
		wantPublic   string // on success
		wantCreds    string // on success; "" means none
		wantDest     string // on success
		wantField    string // on failure
		wantMessage  string // a fragment of the failure
	}{
		{name: "password moves to credentials",
			raw:        `{"type":"rabbitmq","url":"amqps://bob:` + secretPassword + `@Rabbit.Example.com/prod","exchange":"orders"}`,
			wantPublic: `{"url":"amqps://bob@Rabbit.Example.com/prod","exchange":"orders"}`,
			wantCreds:  `{"password":"` + secretPassword + `"}`,
			wantDest:   "amqps://rabbit.example.com:5671/prod/orders"},
		{name: "escaped password is decoded once",
			raw:        `{"type":"rabbitmq","url":"amqp://bob:p%40ss%2Fw@rabbit.example.com:5673/","exchange":"orders","routing_key":"all"}`,
			wantPublic: `{"url":"amqp://bob@rabbit.example.com:5673/","exchange":"orders","routing_key":"all"}`,
			wantCreds:  `{"password":"p@ss/w"}`,
			wantDest:   "amqp://rabbit.example.com:5673/%2F/orders"},
		{name: "empty password is still a password",
			raw:        `{"type":"rabbitmq","url":"amqp://bob:@rabbit.example.com","exchange":"orders"}`,
			wantPublic: `{"url":"amqp://bob@rabbit.example.com","exchange":"orders"}`,
			wantCreds:  `{"password":""}`,
			wantDest:   "amqp://rabbit.example.com:5672/%2F/orders"},
		{name: "no user information",
			raw:        `{"type":"rabbitmq","url":"amqp://rabbit.example.com/%2F","exchange":"orders.v1"}`,
			wantPublic: `{"url":"amqp://rabbit.example.com/%2F","exchange":"orders.v1"}`,
			wantDest:   "amqp://rabbit.example.com:5672/%2F/orders.v1"},
		{name: "explicit empty routing key kept",
			raw:        `{"type":"rabbitmq","url":"amqp://rabbit.example.com","exchange":"fan","routing_key":""}`,
			wantPublic: `{"url":"amqp://rabbit.example.com","exchange":"fan","routing_key":""}`,
			wantDest:   "amqp://rabbit.example.com:5672/%2F/fan"},
		{name: "null routing key means the event key",
			raw:        `{"type":"rabbitmq","url":"amqp://rabbit.example.com","exchange":"fan","routing_key":null}`,
			wantPublic: `{"url":"amqp://rabbit.example.com","exchange":"fan"}`,
			wantDest:   "amqp://rabbit.example.com:5672/%2F/fan"},
		{name: "scheme and host case normalised in destination only",
			raw:        `{"type":"rabbitmq","url":"AMQP://Rabbit.Example.COM.:05672/Vh","exchange":"Ex"}`,
			wantPublic: `{"url":"amqp://Rabbit.Example.COM.:05672/Vh","exchange":"Ex"}`,
			wantDest:   "amqp://rabbit.example.com:5672/Vh/Ex"},
		{name: "exchange and vhost escaped in destination",
			raw:        `{"type":"rabbitmq","url":"amqp://[2606:4700::6810:84E5]/a%2Fb","exchange":"x/y z"}`,
			wantPublic: `{"url":"amqp://[2606:4700::6810:84E5]/a%2Fb","exchange":"x/y z"}`,
			wantDest:   "amqp://[2606:4700::6810:84e5]:5672/a%2Fb/x%2Fy%20z"},
		{name: "private literal allowed in dev", allowPrivate: true,
			raw:        `{"type":"rabbitmq","url":"amqp://guest:guest@127.0.0.1:5672/","exchange":"orders"}`,
			wantPublic: `{"url":"amqp://guest@127.0.0.1:5672/","exchange":"orders"}`,
			wantCreds:  `{"password":"guest"}`,
			wantDest:   "amqp://127.0.0.1:5672/%2F/orders"},

		{name: "not an object", raw: `"amqp://rabbit.example.com"`, wantField: "sink", wantMessage: "JSON object"},
		{name: "unknown field", raw: `{"type":"rabbitmq","url":"amqp://rabbit.example.com","exchange":"x","queue":"q"}`,
			wantField: "sink.queue", wantMessage: "unknown field"},
		{name: "wrong type", raw: `{"type":"webhook","url":"amqp://rabbit.example.com","exchange":"x"}`,
			wantField: "sink.type", wantMessage: `"rabbitmq"`},
		{name: "missing url", raw: `{"type":"rabbitmq","exchange":"x"}`, wantField: "sink.url", wantMessage: "required"},
		{name: "url not a string", raw: `{"type":"rabbitmq","url":5672,"exchange":"x"}`, wantField: "sink.url", wantMessage: "string"},
		{name: "http scheme", raw: `{"type":"rabbitmq","url":"http://bob:` + secretPassword + `@rabbit.example.com","exchange":"x"}`,
			wantField: "sink.url", wantMessage: "amqp or amqps"},
		{name: "no host", raw: `{"type":"rabbitmq","url":"amqp:///vh","exchange":"x"}`, wantField: "sink.url", wantMessage: "host"},
		{name: "opaque", raw: `{"type":"rabbitmq","url":"amqp:rabbit.example.com","exchange":"x"}`, wantField: "sink.url", wantMessage: "host"},
		{name: "unparsable, password not repeated", raw: `{"type":"rabbitmq","url":"amqp://bob:` + secretPassword + `%zz@rabbit.example.com","exchange":"x"}`,
			wantField: "sink.url", wantMessage: "not a valid URL"},
		{name: "port out of range", raw: `{"type":"rabbitmq","url":"amqp://rabbit.example.com:70000","exchange":"x"}`,
			wantField: "sink.url", wantMessage: "port"},
		{name: "query refused", raw: `{"type":"rabbitmq","url":"amqps://rabbit.example.com?certfile=/etc/shadow","exchange":"x"}`,
			wantField: "sink.url", wantMessage: "query"},
		{name: "fragment refused", raw: `{"type":"rabbitmq","url":"amqp://rabbit.example.com#f","exchange":"x"}`,
			wantField: "sink.url", wantMessage: "fragment"},
		{name: "too long", raw: `{"type":"rabbitmq","url":"amqp://rabbit.example.com/` + strings.Repeat("v", MaxURLLength) + `","exchange":"x"}`,
			wantField: "sink.url", wantMessage: "at most"},
		{name: "vhost too long", raw: `{"type":"rabbitmq","url":"amqp://rabbit.example.com/` + longName + `","exchange":"x"}`,
			wantField: "sink.url", wantMessage: "virtual host"},
		{name: "loopback literal", raw: `{"type":"rabbitmq","url":"amqp://guest:guest@127.0.0.1:5672/","exchange":"x"}`,
			wantField: "sink.url", wantMessage: "loopback"},
		{name: "metadata literal", raw: `{"type":"rabbitmq","url":"amqp://169.254.169.254","exchange":"x"}`,
			wantField: "sink.url", wantMessage: "link-local"},
		{name: "missing exchange", raw: `{"type":"rabbitmq","url":"amqp://rabbit.example.com"}`, wantField: "sink.exchange", wantMessage: "required"},
		{name: "empty exchange", raw: `{"type":"rabbitmq","url":"amqp://rabbit.example.com","exchange":""}`,
			wantField: "sink.exchange", wantMessage: "required"},
		{name: "exchange too long", raw: `{"type":"rabbitmq","url":"amqp://rabbit.example.com","exchange":"` + longName + `"}`,
			wantField: "sink.exchange", wantMessage: "255 bytes"},
		{name: "exchange with control character", raw: `{"type":"rabbitmq","url":"amqp://rabbit.example.com","exchange":"a\nb"}`,
			wantField: "sink.exchange", wantMessage: "control"},
		{name: "routing key not a string", raw: `{"type":"rabbitmq","url":"amqp://rabbit.example.com","exchange":"x","routing_key":1}`,
			wantField: "sink.routing_key", wantMessage: "string"},
		{name: "routing key too long", raw: `{"type":"rabbitmq","url":"amqp://rabbit.example.com","exchange":"x","routing_key":"` + longName + `"}`,
			wantField: "sink.routing_key", wantMessage: "255 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := NewType(Options{AllowPrivate: tc.allowPrivate}).Parse(json.RawMessage(tc.raw))
			if tc.wantField != "" {
				fieldErr, ok := errors.AsType[*sink.FieldError](err)
				if !ok {
					t.Fatalf("Parse error %v is not a *sink.FieldError", err)
				}
				if fieldErr.Field != tc.wantField || !strings.Contains(fieldErr.Message, tc.wantMessage) {
					t.Fatalf("Parse error = %q, want field %s and a message mentioning %q", fieldErr, tc.wantField, tc.wantMessage)
				}
				if strings.Contains(fieldErr.Error(), secretPassword) {
					t.Fatalf("Parse error %q repeats the password", fieldErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if string(cfg.Public) != tc.wantPublic {
				t.Errorf("Public = %s, want %s", cfg.Public, tc.wantPublic)
			}
			if string(cfg.Credentials) != tc.wantCreds {
				t.Errorf("Credentials = %s, want %s", cfg.Credentials, tc.wantCreds)
			}
			if cfg.Destination != tc.wantDest {
				t.Errorf("Destination = %q, want %q", cfg.Destination, tc.wantDest)
			}
			for what, shown := range map[string]string{"Public": string(cfg.Public), "Destination": cfg.Destination} {
				if strings.Contains(shown, secretPassword) || strings.Contains(shown, "p@ss") {
					t.Errorf("%s %q holds the password", what, shown)
				}
			}
			if strings.Contains(cfg.Destination, "bob") {
				t.Errorf("Destination %q holds the user name", cfg.Destination)
			}
		})
	}
}

// TestParseOpenRoundTrip checks that Open puts the password back where
// Parse took it from, byte for byte after decoding.
func TestParseOpenRoundTrip(t *testing.T) {
	typ := NewType(Options{})
	cfg, err := typ.Parse(json.RawMessage(`{"type":"rabbitmq","url":"amqp://bob:p%40ss%3Aw@rabbit.example.com:5673/prod","exchange":"orders"}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := typ.Open(cfg, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	uri, err := amqp.ParseURI(s.(*rabbitSink).broker.url)
	if err != nil {
		t.Fatal(err)
	}
	want := amqp.URI{Scheme: "amqp", Host: "rabbit.example.com", Port: 5673, Username: "bob", Password: "p@ss:w", Vhost: "prod"}
	if uri.Scheme != want.Scheme || uri.Host != want.Host || uri.Port != want.Port ||
		uri.Username != want.Username || uri.Password != want.Password || uri.Vhost != want.Vhost {
		t.Fatalf("opened broker URI = %+v, want %+v", uri, want)
	}
}

func TestOpenRejects(t *testing.T) {
	typ := NewType(Options{})
	tests := []struct {
		name string
		cfg  sink.Config
		want string
	}{
		{"public not JSON", sink.Config{Public: json.RawMessage(`nope`)}, "not a JSON object"},
		{"no exchange", sink.Config{Public: json.RawMessage(`{"url":"amqp://rabbit.example.com"}`)}, "no exchange"},
		{"password in public", sink.Config{Public: json.RawMessage(`{"url":"amqp://bob:` + secretPassword + `@rabbit.example.com","exchange":"x"}`)},
			"without a password"},
		{"bad scheme", sink.Config{Public: json.RawMessage(`{"url":"http://rabbit.example.com","exchange":"x"}`)}, "amqp or amqps"},
		{"credentials not JSON", sink.Config{Public: json.RawMessage(`{"url":"amqp://bob@rabbit.example.com","exchange":"x"}`),
			Credentials: json.RawMessage(secretPassword)}, "credentials"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := typ.Open(tc.cfg, nil)
			if err == nil {
				s.Close()
				t.Fatalf("Open succeeded, want an error mentioning %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open error %q, want it to mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secretPassword) {
				t.Fatalf("Open error %q repeats the password", err)
			}
		})
	}
	if n := typ.brokers.Len(); n != 0 {
		t.Fatalf("%d brokers registered by failed opens", n)
	}
}

// TestSinksShareOneBroker checks the reference counting that keeps one
// connection per broker URL while any sink uses it.
func TestSinksShareOneBroker(t *testing.T) {
	typ := NewType(Options{})
	open := func(raw string) sink.Sink {
		t.Helper()
		cfg, err := typ.Parse(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		s, err := typ.Open(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := open(`{"type":"rabbitmq","url":"amqp://bob:pw@rabbit.example.com","exchange":"a"}`)
	b := open(`{"type":"rabbitmq","url":"amqp://bob:pw@rabbit.example.com","exchange":"b"}`)
	other := open(`{"type":"rabbitmq","url":"amqp://bob:other@rabbit.example.com","exchange":"a"}`)
	if a.(*rabbitSink).broker != b.(*rabbitSink).broker {
		t.Fatal("sinks of one broker URL got different brokers")
	}
	if a.(*rabbitSink).broker == other.(*rabbitSink).broker {
		t.Fatal("sinks with different credentials share a broker")
	}
	shared := a.(*rabbitSink).broker
	a.Close()
	a.Close() // a second close must not release b's share
	if typ.brokers.Len() != 2 || shared.closed {
		t.Fatalf("broker released while a sink still uses it (brokers %d, closed %v)", typ.brokers.Len(), shared.closed)
	}
	b.Close()
	other.Close()
	if typ.brokers.Len() != 0 || !shared.closed {
		t.Fatalf("brokers left after every sink closed: %d (closed %v)", typ.brokers.Len(), shared.closed)
	}
	out := b.Deliver(t.Context(), sink.Delivery{EventID: "e", EventKey: "k.v"})
	if out.OK || !strings.Contains(out.Error, "sink closed") {
		t.Fatalf("Deliver after Close = %+v, want a sink closed failure", out)
	}
}

func TestDescribeAMQPError(t *testing.T) {
	tests := []struct {
		err  *amqp.Error
		want string
	}{
		{amqp.ErrCredentials, "the broker refused the user name or password"},
		{amqp.ErrVhost, "the broker refused access to the virtual host"},
		{&amqp.Error{Code: 404, Reason: "NOT_FOUND - no exchange 'x' in vhost '/'", Server: true, Recover: true},
			"the broker closed the channel: NOT_FOUND - no exchange 'x' in vhost '/' (404)"},
		{&amqp.Error{Code: 320, Reason: "CONNECTION_FORCED - broker forced connection closure", Server: true},
			"the broker closed the connection: CONNECTION_FORCED - broker forced connection closure (320)"},
		{amqp.ErrClosed, "the broker connection is not open: channel/connection is not open (504)"},
		{&amqp.Error{Code: 501, Reason: "EOF"}, "the connection: EOF (501)"},
	}
	for _, tc := range tests {
		if got := describeAMQPError(tc.err); got != tc.want {
			t.Errorf("describeAMQPError(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
