package nats

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nkeys"

	"github.com/hubctl/hubctl/internal/sink"
)

// testCreds is a credentials file's content with a fresh user seed; the JWT
// is only shaped like one, which is all Parse checks.
func testCreds(t testing.TB) (creds, seed string) {
	t.Helper()
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := user.Seed()
	if err != nil {
		t.Fatal(err)
	}
	jwt := "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJzdWIiOiJVQVRFU1QifQ.c2lnbmF0dXJl"
	return fmt.Sprintf("-----BEGIN NATS USER JWT-----\n%s\n------END NATS USER JWT------\n\n"+
		"************************* IMPORTANT *************************\n"+
		"NKEY Seed printed below can be used to sign and prove identity.\n\n"+
		"-----BEGIN USER NKEY SEED-----\n%s\n------END USER NKEY SEED------\n", jwt, raw), string(raw)
}

func TestParse(t *testing.T) {
	creds, seed := testCreds(t)
	typ := NewType(Options{})
	tests := []struct {
		name        string
		object      string
		field       string // "" when Parse must accept it
		destination string
		public      string
	}{
		{"no credentials", `{"url":"nats://NATS.example.com","subject":"orders.created"}`, "",
			"nats://nats.example.com:4222/orders.created", `{"url":"nats://nats.example.com:4222","subject":"orders.created"}`},
		{"token", `{"url":"tls://nats.example.com:7422/","subject":"a.b","credentials":{"token":"` + testToken + `"}}`, "",
			"tls://nats.example.com:7422/a.b", `{"url":"tls://nats.example.com:7422","subject":"a.b"}`},
		{"user and password", `{"url":"nats://[2606:4700::6810:84e5]","subject":"a","credentials":{"username":"bob","password":"` + testPassword + `"}}`, "",
			"nats://[2606:4700::6810:84e5]:4222/a", `{"url":"nats://[2606:4700::6810:84e5]:4222","subject":"a","credentials":{"username":"bob"}}`},
		{"credentials file", `{"url":"nats://nats.example.com","subject":"a","credentials":{"creds":` + quote(creds) + `}}`, "",
			"nats://nats.example.com:4222/a", `{"url":"nats://nats.example.com:4222","subject":"a"}`},
		{"null credentials", `{"url":"nats://nats.example.com","subject":"a","credentials":null}`, "", "nats://nats.example.com:4222/a", ""},

		{"no url", `{"subject":"a"}`, "sink.url", "", ""},
		{"websocket url", `{"url":"ws://nats.example.com","subject":"a"}`, "sink.url", "", ""},
		{"password in the url", `{"url":"nats://bob:` + testPassword + `@nats.example.com","subject":"a"}`, "sink.url", "", ""},
		{"url with a path", `{"url":"nats://nats.example.com/x","subject":"a"}`, "sink.url", "", ""},
		{"url list", `{"url":"nats://a.example.com,nats://b.example.com","subject":"a"}`, "sink.url", "", ""},
		{"bad port", `{"url":"nats://nats.example.com:0","subject":"a"}`, "sink.url", "", ""},
		{"private address", `{"url":"nats://10.1.2.3","subject":"a"}`, "sink.url", "", ""},
		{"loopback", `{"url":"nats://127.0.0.1:4222","subject":"a"}`, "sink.url", "", ""},
		{"no subject", `{"url":"nats://nats.example.com"}`, "sink.subject", "", ""},
		{"wildcard subject", `{"url":"nats://nats.example.com","subject":"orders.*"}`, "sink.subject", "", ""},
		{"full wildcard", `{"url":"nats://nats.example.com","subject":"orders.>"}`, "sink.subject", "", ""},
		{"empty token in subject", `{"url":"nats://nats.example.com","subject":"orders..created"}`, "sink.subject", "", ""},
		{"space in subject", `{"url":"nats://nats.example.com","subject":"orders created"}`, "sink.subject", "", ""},
		{"system subject", `{"url":"nats://nats.example.com","subject":"$JS.API.STREAM.DELETE.x"}`, "sink.subject", "", ""},
		{"long subject", `{"url":"nats://nats.example.com","subject":"` + strings.Repeat("a", MaxSubjectLength+1) + `"}`, "sink.subject", "", ""},
		{"credentials not an object", `{"url":"nats://nats.example.com","subject":"a","credentials":"` + testToken + `"}`, "sink.credentials", "", ""},
		{"two kinds", `{"url":"nats://nats.example.com","subject":"a","credentials":{"token":"` + testToken + `","password":"` + testPassword + `"}}`, "sink.credentials", "", ""},
		{"password without user", `{"url":"nats://nats.example.com","subject":"a","credentials":{"password":"` + testPassword + `"}}`, "sink.credentials", "", ""},
		{"empty token", `{"url":"nats://nats.example.com","subject":"a","credentials":{"token":""}}`, "sink.credentials.token", "", ""},
		{"token with a space", `{"url":"nats://nats.example.com","subject":"a","credentials":{"token":"` + testToken + ` x"}}`, "sink.credentials.token", "", ""},
		{"creds without a seed", `{"url":"nats://nats.example.com","subject":"a","credentials":{"creds":` + quote(strings.ReplaceAll(creds, seed, "")) + `}}`, "sink.credentials.creds", "", ""},
		{"creds that are a seed only", `{"url":"nats://nats.example.com","subject":"a","credentials":{"creds":` + quote(seed) + `}}`, "sink.credentials.creds", "", ""},
		{"unknown field", `{"url":"nats://nats.example.com","subject":"a","stream":"x"}`, "sink.stream", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := json.RawMessage(`{"type":"nats",` + tc.object[1:])
			cfg, err := typ.Parse(raw)
			if tc.field != "" {
				var fe *sink.FieldError
				if !errors.As(err, &fe) || fe.Field != tc.field {
					t.Fatalf("Parse = %v, want a FieldError on %s", err, tc.field)
				}
				for _, secret := range []string{testToken, testPassword, seed} {
					if strings.Contains(err.Error(), secret) {
						t.Fatalf("error %q quotes a credential", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if cfg.Destination != tc.destination {
				t.Errorf("Destination = %q, want %q", cfg.Destination, tc.destination)
			}
			if tc.public != "" && string(cfg.Public) != tc.public {
				t.Errorf("Public = %s, want %s", cfg.Public, tc.public)
			}
			if _, err := typ.Open(cfg, nil); err != nil {
				t.Errorf("Open of what Parse gave: %v", err)
			}
		})
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestReadsMaskAndRestoreCredentials: reads show each kind of secret
// masked where it was given; the read sent back keeps the secret for the
// same server and user, and is refused anywhere else and on create.
func TestReadsMaskAndRestoreCredentials(t *testing.T) {
	creds, seed := testCreds(t)
	typ := NewType(Options{})
	reg, err := sink.NewRegistry(typ)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, credentials, secret string
		shown                     map[string]any
	}{
		{"token", `{"token":"` + testToken + `"}`, testToken, map[string]any{"token": sink.Masked}},
		{"password", `{"username":"bob","password":"` + testPassword + `"}`, testPassword, map[string]any{"username": "bob", "password": sink.Masked}},
		{"credentials file", `{"creds":` + quote(creds) + `}`, seed, map[string]any{"creds": sink.Masked}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			object := func(url string) json.RawMessage {
				return json.RawMessage(`{"type":"nats","url":"` + url + `","subject":"orders.created","credentials":` + tc.credentials + `}`)
			}
			parse := func(raw json.RawMessage, current *sink.Config) (sink.Parsed, error) {
				obj, err := reg.Object(raw)
				if err != nil {
					t.Fatal(err)
				}
				return obj.Parse(current)
			}
			stored, err := parse(object("nats://nats.example.com"), nil)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			view, err := reg.Show(Name, stored.Config.Public, stored.CredentialFields)
			if err != nil {
				t.Fatalf("Show: %v", err)
			}
			read, _ := json.Marshal(view)
			if strings.Contains(string(read), tc.secret) {
				t.Fatalf("read %s shows the secret", read)
			}
			shown, _ := json.Marshal(view["credentials"])
			want, _ := json.Marshal(tc.shown)
			if string(shown) != string(want) {
				t.Errorf("read shows credentials %s, want %s", shown, want)
			}

			// Sent back as it is: the same configuration, secret included.
			again, err := parse(read, &stored.Config)
			if err != nil {
				t.Fatalf("Parse of the read: %v", err)
			}
			if stored.Config.Differs(again.Config) {
				t.Errorf("the read sent back changed the configuration")
			}
			// Sent back to another subject of the same server: kept.
			var moved map[string]any
			_ = json.Unmarshal(read, &moved)
			moved["subject"] = "orders.paid"
			raw, _ := json.Marshal(moved)
			if _, err := parse(raw, &stored.Config); err != nil {
				t.Errorf("the read for another subject of the same server: %v", err)
			}
			// Sent to another server, or on create: refused, naming no secret.
			moved["url"] = "nats://attacker.example.com"
			raw, _ = json.Marshal(moved)
			for what, current := range map[string]*sink.Config{"another server": &stored.Config, "create": nil} {
				_, err := parse(raw, current)
				var invalid *sink.InvalidError
				if !errors.As(err, &invalid) || !strings.HasPrefix(invalid.Field, "sink.credentials") {
					t.Errorf("%s with the mask: %v, want an invalid sink.credentials field", what, err)
				}
				if err != nil && strings.Contains(err.Error(), tc.secret) {
					t.Errorf("%s: error %q quotes the secret", what, err)
				}
			}
		})
	}
}

// TestUserNameChangeDropsThePassword: a masked password stands for the
// current user's only.
func TestUserNameChangeDropsThePassword(t *testing.T) {
	typ := NewType(Options{})
	stored, err := typ.Parse(json.RawMessage(`{"type":"nats","url":"nats://nats.example.com","subject":"a","credentials":{"username":"bob","password":"` + testPassword + `"}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = typ.RestoreMasked(json.RawMessage(`{"type":"nats","url":"nats://nats.example.com","subject":"a","credentials":{"username":"eve","password":"****"}}`), &stored)
	var fe *sink.FieldError
	if !errors.As(err, &fe) || fe.Field != "sink.credentials.password" {
		t.Fatalf("RestoreMasked for another user = %v, want a FieldError on the password", err)
	}
}

func TestOpenRejectsBrokenStoredConfig(t *testing.T) {
	typ := NewType(Options{})
	for name, cfg := range map[string]sink.Config{
		"not JSON":              {Public: json.RawMessage(`nope`)},
		"bad url":               {Public: json.RawMessage(`{"url":"http://x","subject":"a"}`)},
		"bad subject":           {Public: json.RawMessage(`{"url":"nats://x:4222","subject":"a.*"}`)},
		"credentials not JSON":  {Public: json.RawMessage(`{"url":"nats://x:4222","subject":"a"}`), Credentials: json.RawMessage(`"` + testToken)},
		"user without password": {Public: json.RawMessage(`{"url":"nats://x:4222","subject":"a","credentials":{"username":"bob"}}`)},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := typ.Open(cfg, nil); err == nil {
				t.Fatal("Open accepted it")
			} else if strings.Contains(err.Error(), testToken) {
				t.Fatalf("error %q quotes the token", err)
			}
		})
	}
}
