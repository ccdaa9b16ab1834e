package rabbitmq

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/sink"
)

// readBack is the sink object a read shows for cfg, as a client would send
// it back.
func readBack(t *testing.T, typ *Type, cfg sink.Config) (json.RawMessage, map[string]any) {
	t.Helper()
	var fields []string
	if cfg.Credentials != nil {
		fields = []string{passwordField}
	}
	view, err := typ.MaskCredentials(cfg.Public, fields)
	if err != nil {
		t.Fatalf("MaskCredentials: %v", err)
	}
	view["type"] = Name
	raw, err := json.Marshal(view)
	if err != nil {
		t.Fatal(err)
	}
	return raw, view
}

func TestMaskCredentialsShowsThePasswordMaskedInPlace(t *testing.T) {
	tests := []struct {
		name, url, want string
	}{
		{"user and password", "amqps://bob:" + secretPassword + "@Rabbit.Example.com/prod", "amqps://bob:****@Rabbit.Example.com/prod"},
		{"escaped user name", "amqp://b%40b:" + secretPassword + "@rabbit.example.com:5673/%2F", "amqp://b%40b:****@rabbit.example.com:5673/%2F"},
		{"empty password", "amqp://bob:@rabbit.example.com", "amqp://bob:****@rabbit.example.com"},
		{"password without user name", "amqp://:" + secretPassword + "@[2606:4700::6810:84e5]/vh", "amqp://:****@[2606:4700::6810:84e5]/vh"},
		{"no password", "amqp://bob@rabbit.example.com/vh", "amqp://bob@rabbit.example.com/vh"},
		{"no user information", "amqp://rabbit.example.com", "amqp://rabbit.example.com"},
	}
	typ := NewType(Options{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := typ.Parse(json.RawMessage(`{"type":"rabbitmq","url":"` + tc.url + `","exchange":"orders"}`))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			_, view := readBack(t, typ, cfg)
			if view["url"] != tc.want || view["exchange"] != "orders" || len(view) != 3 {
				t.Errorf("view = %v, want url %s beside the exchange and type only", view, tc.want)
			}
		})
	}
}

// TestReadBackRoundTrips: the object a read shows, sent back, parses to
// the configuration it was read from, password included.
func TestReadBackRoundTrips(t *testing.T) {
	typ := NewType(Options{})
	for _, target := range []string{
		"amqps://bob:" + secretPassword + "@Rabbit.Example.com/prod",
		"amqp://bob:p%40ss%2Fw@rabbit.example.com:5673/",
		"amqp://bob:@rabbit.example.com",
		"amqp://:" + secretPassword + "@rabbit.example.com/a%2Fb",
		"amqp://bob@rabbit.example.com",
		"amqp://rabbit.example.com",
	} {
		cfg, err := typ.Parse(json.RawMessage(`{"type":"rabbitmq","url":"` + target + `","exchange":"orders","routing_key":"all"}`))
		if err != nil {
			t.Fatalf("Parse %s: %v", target, err)
		}
		shown, _ := readBack(t, typ, cfg)
		if strings.Contains(string(shown), secretPassword) || strings.Contains(string(shown), "p%40ss") {
			t.Fatalf("the read of %s shows the password: %s", target, shown)
		}
		restored, err := typ.RestoreMasked(shown, &cfg)
		if err != nil {
			t.Fatalf("RestoreMasked of %s: %v", shown, err)
		}
		again, err := typ.Parse(restored)
		if err != nil {
			t.Fatalf("Parse of the read-back %s: %v", shown, err)
		}
		if string(again.Public) != string(cfg.Public) || string(again.Credentials) != string(cfg.Credentials) || again.Destination != cfg.Destination {
			t.Errorf("%s read back as %+v, want %+v", target, again, cfg)
		}
	}
}

func TestRestoreMasked(t *testing.T) {
	typ := NewType(Options{})
	current, err := typ.Parse(json.RawMessage(`{"type":"rabbitmq","url":"amqp://bob:` + secretPassword + `@rabbit.example.com/prod","exchange":"orders"}`))
	if err != nil {
		t.Fatal(err)
	}
	noPassword, err := typ.Parse(json.RawMessage(`{"type":"rabbitmq","url":"amqp://bob@rabbit.example.com/prod","exchange":"orders"}`))
	if err != nil {
		t.Fatal(err)
	}
	object := func(url string) json.RawMessage {
		return json.RawMessage(`{"type":"rabbitmq","url":"` + url + `","exchange":"orders.v2"}`)
	}
	tests := []struct {
		name    string
		raw     json.RawMessage
		current *sink.Config
		// On success, the URL Parse then sees; "" means raw is returned
		// as it is.
		wantURL     string
		wantMessage string // a fragment of the *sink.FieldError on sink.url
	}{
		{name: "masked, same broker", raw: object("amqp://bob:****@rabbit.example.com/prod"), current: &current,
			wantURL: "amqp://bob:" + secretPassword + "@rabbit.example.com/prod"},
		{name: "mask percent-encoded", raw: object("amqp://bob:%2A%2A%2A%2A@rabbit.example.com/prod"), current: &current,
			wantURL: "amqp://bob:" + secretPassword + "@rabbit.example.com/prod"},
		{name: "another vhost on the same broker", raw: object("amqp://bob:****@rabbit.example.com/staging"), current: &current,
			wantURL: "amqp://bob:" + secretPassword + "@rabbit.example.com/staging"},
		{name: "host spelt differently, default port spelt out", raw: object("amqp://bob:****@RABBIT.example.com.:5672/prod"), current: &current,
			wantURL: "amqp://bob:" + secretPassword + "@RABBIT.example.com.:5672/prod"},
		{name: "a password of its own", raw: object("amqp://bob:new-password@rabbit.example.com/prod"), current: &current},
		{name: "no password", raw: object("amqp://bob@rabbit.example.com/prod"), current: &current},
		{name: "not a URL", raw: object("amqp://bob:****@rabbit.example.com:x"), current: &current},
		{name: "no url", raw: json.RawMessage(`{"type":"rabbitmq","exchange":"x"}`), current: &current},
		{name: "not an object", raw: json.RawMessage(`["amqp://bob:****@rabbit.example.com"]`), current: &current},

		{name: "on create", raw: object("amqp://bob:****@rabbit.example.com/prod"), wantMessage: "no current password"},
		{name: "current has no password", raw: object("amqp://bob:****@rabbit.example.com/prod"), current: &noPassword, wantMessage: "no current password"},
		{name: "another host", raw: object("amqp://bob:****@rabbit.example.net/prod"), current: &current, wantMessage: "same broker"},
		{name: "another port", raw: object("amqp://bob:****@rabbit.example.com:5673/prod"), current: &current, wantMessage: "same broker"},
		{name: "another scheme", raw: object("amqps://bob:****@rabbit.example.com:5672/prod"), current: &current, wantMessage: "same broker"},
		{name: "another user", raw: object("amqp://alice:****@rabbit.example.com/prod"), current: &current, wantMessage: "same broker"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := typ.RestoreMasked(tc.raw, tc.current)
			if tc.wantMessage != "" {
				fieldErr, ok := errors.AsType[*sink.FieldError](err)
				if !ok || fieldErr.Field != "sink.url" || !strings.Contains(fieldErr.Message, tc.wantMessage) {
					t.Fatalf("err = %v, want a FieldError on sink.url mentioning %q", err, tc.wantMessage)
				}
				if strings.Contains(err.Error(), secretPassword) {
					t.Errorf("the error %q repeats the password", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("RestoreMasked: %v", err)
			}
			if tc.wantURL == "" {
				if string(got) != string(tc.raw) {
					t.Errorf("got %s, want the object unchanged", got)
				}
				return
			}
			var fields struct{ URL, Exchange string }
			if err := json.Unmarshal(got, &fields); err != nil {
				t.Fatal(err)
			}
			cfg, err := typ.Parse(got)
			if err != nil {
				t.Fatalf("Parse of the restored object: %v", err)
			}
			want, err := typ.Parse(object(tc.wantURL))
			if err != nil {
				t.Fatal(err)
			}
			if fields.Exchange != "orders.v2" || string(cfg.Credentials) != string(want.Credentials) || string(cfg.Public) != string(want.Public) {
				t.Errorf("restored %s parses to %+v, want %+v", got, cfg, want)
			}
		})
	}
}
