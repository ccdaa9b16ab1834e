package pubsub

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/sink"
)

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestParse(t *testing.T) {
	key := testKey(t)
	typ := NewType(Options{})
	withKey := func(object string) string {
		return strings.Replace(object, "}", `,"credentials_json":`+quote(key)+"}", 1)
	}
	tests := []struct {
		name        string
		object      string
		field       string // "" when Parse must accept it
		destination string
		public      string
	}{
		{"Google's endpoint with a key", withKey(`{"project":"acme-prod","topic":"orders"}`), "",
			"pubsub://pubsub.googleapis.com:443/projects/acme-prod/topics/orders", `{"project":"acme-prod","topic":"orders"}`},
		{"private endpoint with a key", withKey(`{"project":"acme-prod","topic":"Orders.v1~x+y%z_w","endpoint":"PUBSUB.Example.com.:443"}`), "",
			"pubsub://pubsub.example.com:443/projects/acme-prod/topics/Orders.v1~x+y%z_w",
			`{"project":"acme-prod","topic":"Orders.v1~x+y%z_w","endpoint":"pubsub.example.com:443"}`},
		{"emulator without a key", `{"project":"acme-prod","topic":"orders","endpoint":"emulator.example.com:8085"}`, "",
			"pubsub://emulator.example.com:8085/projects/acme-prod/topics/orders",
			`{"project":"acme-prod","topic":"orders","endpoint":"emulator.example.com:8085"}`},
		{"domain-scoped project", withKey(`{"project":"example.com:acme","topic":"orders"}`), "",
			"pubsub://pubsub.googleapis.com:443/projects/example.com:acme/topics/orders", ""},
		{"null endpoint", withKey(`{"project":"acme-prod","topic":"orders","endpoint":null}`), "",
			"pubsub://pubsub.googleapis.com:443/projects/acme-prod/topics/orders", ""},

		{"neither key nor endpoint", `{"project":"acme-prod","topic":"orders"}`, "sink.credentials_json", "", ""},
		{"empty key", `{"project":"acme-prod","topic":"orders","credentials_json":""}`, "sink.credentials_json", "", ""},
		{"no project", withKey(`{"topic":"orders"}`), "sink.project", "", ""},
		{"project in capitals", withKey(`{"project":"Acme","topic":"orders"}`), "sink.project", "", ""},
		{"project with a slash", withKey(`{"project":"acme/topics/x","topic":"orders"}`), "sink.project", "", ""},
		{"project detection asked for", withKey(`{"project":"*detect-project-id*","topic":"orders"}`), "sink.project", "", ""},
		{"no topic", withKey(`{"project":"acme-prod"}`), "sink.topic", "", ""},
		{"topic too short", withKey(`{"project":"acme-prod","topic":"ab"}`), "sink.topic", "", ""},
		{"topic starting with a digit", withKey(`{"project":"acme-prod","topic":"1orders"}`), "sink.topic", "", ""},
		{"Google's own topic", withKey(`{"project":"acme-prod","topic":"goog-orders"}`), "sink.topic", "", ""},
		{"topic as a resource name", withKey(`{"project":"acme-prod","topic":"projects/x/topics/y"}`), "sink.topic", "", ""},
		{"topic not a string", withKey(`{"project":"acme-prod","topic":7}`), "sink.topic", "", ""},
		{"endpoint as a URL", withKey(`{"project":"acme-prod","topic":"orders","endpoint":"https://pubsub.example.com"}`), "sink.endpoint", "", ""},
		{"endpoint without a port", withKey(`{"project":"acme-prod","topic":"orders","endpoint":"pubsub.example.com"}`), "sink.endpoint", "", ""},
		{"endpoint with a user", withKey(`{"project":"acme-prod","topic":"orders","endpoint":"bob@pubsub.example.com:443"}`), "sink.endpoint", "", ""},
		{"private endpoint address", `{"project":"acme-prod","topic":"orders","endpoint":"10.1.2.3:8085"}`, "sink.endpoint", "", ""},
		{"loopback endpoint", `{"project":"acme-prod","topic":"orders","endpoint":"127.0.0.1:8085"}`, "sink.endpoint", "", ""},
		{"unknown field", withKey(`{"project":"acme-prod","topic":"orders","region":"us"}`), "sink.region", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := typ.Parse(json.RawMessage(strings.Replace(tc.object, "{", `{"type":"pubsub",`, 1)))
			if tc.field != "" {
				fe, ok := errors.AsType[*sink.FieldError](err)
				if !ok || fe.Field != tc.field {
					t.Fatalf("Parse error = %v, want a FieldError on %s", err, tc.field)
				}
				if strings.Contains(fe.Error(), key) || strings.Contains(fe.Error(), "PRIVATE KEY") {
					t.Errorf("error %q quotes the key", fe)
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
			if strings.Contains(string(cfg.Public), "PRIVATE KEY") {
				t.Errorf("Public %s holds the key", cfg.Public)
			}
			if strings.Contains(tc.object, "credentials_json") {
				var creds credentials
				if err := json.Unmarshal(cfg.Credentials, &creds); err != nil || creds.JSON != key {
					t.Errorf("Credentials do not hold the key as given (%v)", err)
				}
			} else if cfg.Credentials != nil {
				t.Errorf("Credentials = %s, want none", cfg.Credentials)
			}
		})
	}
}

func TestParseAllowsPrivateEndpointsWhenAsked(t *testing.T) {
	cfg, err := NewType(Options{AllowPrivate: true}).Parse(json.RawMessage(`{"type":"pubsub","project":"p-1","topic":"orders","endpoint":"127.0.0.1:8085"}`))
	if err != nil || cfg.Destination != "pubsub://127.0.0.1:8085/projects/p-1/topics/orders" {
		t.Fatalf("Parse = %+v, %v; want the loopback emulator accepted", cfg, err)
	}
}

func TestCheckServiceAccountKey(t *testing.T) {
	key := testKey(t)
	var fields map[string]any
	if err := json.Unmarshal([]byte(key), &fields); err != nil {
		t.Fatal(err)
	}
	with := func(name string, value any) string {
		changed := map[string]any{}
		for k, v := range fields {
			changed[k] = v
		}
		if value == nil {
			delete(changed, name)
		} else {
			changed[name] = value
		}
		b, _ := json.Marshal(changed)
		return string(b)
	}
	tests := []struct {
		name, key, want string // want: "" to accept, else part of the error
	}{
		{"a service-account key", key, ""},
		{"no token_uri: Google's", with("token_uri", nil), ""},
		{"not JSON", "-----BEGIN PRIVATE KEY-----", "service-account key file"},
		{"an external account", with("type", "external_account"), "service_account"},
		{"a user's refresh token", with("type", "authorized_user"), "service_account"},
		{"no private key", with("private_key", nil), "private_key"},
		{"no client email", with("client_email", nil), "client_email"},
		{"a token URI of the tenant's", with("token_uri", "http://10.0.0.1/token"), "token_uri"},
		{"too large", with("padding", strings.Repeat("x", MaxCredentialsBytes)), "at most"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckServiceAccountKey(tc.key)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("CheckServiceAccountKey: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("CheckServiceAccountKey = %v, want an error about %s", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "PRIVATE KEY"):
				t.Fatalf("error %q quotes the key", err)
			}
		})
	}
}

func TestMaskingShowsTheKeyMaskedAndKeepsItOnlyForTheSameEndpoint(t *testing.T) {
	key := testKey(t)
	typ := NewType(Options{AllowPrivate: true})
	reg, err := sink.NewRegistry(typ)
	if err != nil {
		t.Fatal(err)
	}
	current, err := typ.Parse(json.RawMessage(`{"type":"pubsub","project":"acme-prod","topic":"orders","endpoint":"pubsub.example.com:443","credentials_json":` + quote(key) + `}`))
	if err != nil {
		t.Fatal(err)
	}
	shown, err := reg.Show(Name, current.Public, []string{credentialsField})
	if err != nil {
		t.Fatal(err)
	}
	if shown[credentialsField] != sink.Masked {
		t.Errorf("read shows credentials_json %v, want the mask", shown[credentialsField])
	}
	read, _ := json.Marshal(shown)
	if strings.Contains(string(read), "PRIVATE KEY") || strings.Contains(string(read), "client_email") {
		t.Errorf("read %s shows part of the key", read)
	}

	// The read, sent back with another topic, keeps the key.
	shown["topic"] = "payments"
	edited, _ := json.Marshal(shown)
	restored, err := typ.RestoreMasked(edited, &current)
	if err != nil {
		t.Fatalf("RestoreMasked: %v", err)
	}
	next, err := typ.Parse(restored)
	if err != nil {
		t.Fatal(err)
	}
	if string(next.Credentials) != string(current.Credentials) {
		t.Error("the mask sent back with another topic did not keep the key")
	}

	// Sent back with another endpoint, or with none to restore, it is refused.
	for name, endpoint := range map[string]any{"another endpoint": "attacker.example.com:443", "Google's endpoint": nil} {
		t.Run(name, func(t *testing.T) {
			moved := map[string]any{}
			for k, v := range shown {
				moved[k] = v
			}
			if endpoint == nil {
				delete(moved, "endpoint")
			} else {
				moved["endpoint"] = endpoint
			}
			raw, _ := json.Marshal(moved)
			_, err := typ.RestoreMasked(raw, &current)
			fe, ok := errors.AsType[*sink.FieldError](err)
			if !ok || fe.Field != "sink.credentials_json" || strings.Contains(fe.Error(), "PRIVATE KEY") {
				t.Fatalf("RestoreMasked = %v, want a FieldError on sink.credentials_json that quotes no key", err)
			}
		})
	}
	if _, err := typ.RestoreMasked(edited, nil); err == nil {
		t.Error("a mask on create was accepted")
	}
}
