package webhook

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/sink"
)

// TestParseHeadersAndAuth: custom headers and auth are accepted beside the
// url, the auth's secret goes to the credentials, and every name the hub
// owns (any case), every malformed name or value, is refused on its field.
func TestParseHeadersAndAuth(t *testing.T) {
	typ := newTestType(t, Options{})
	obj := func(extra string) json.RawMessage {
		return json.RawMessage(`{"type":"webhook","url":"https://hooks.example.com/in",` + extra + `}`)
	}
	cfg, err := typ.Parse(obj(`"headers":{"X-Api-Version":"2","x-tenant":"acme"},"auth":{"type":"basic","username":"hub","password":"s3cret pass"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSONText(cfg.Public, `{"url":"https://hooks.example.com/in","headers":{"X-Api-Version":"2","x-tenant":"acme"},"auth":{"type":"basic","username":"hub"}}`) ||
		!sameJSONText(cfg.Credentials, `{"password":"s3cret pass"}`) {
		t.Errorf("split %s / %s", cfg.Public, cfg.Credentials)
	}
	cfg, err = typ.Parse(obj(`"auth":{"type":"bearer","token":"eyJhbGciOi.x.y"}`))
	if err != nil || !sameJSONText(cfg.Credentials, `{"token":"eyJhbGciOi.x.y"}`) || strings.Contains(string(cfg.Public), "eyJ") {
		t.Errorf("bearer split %s / %s, %v", cfg.Public, cfg.Credentials, err)
	}
	// Without auth, Authorization is the caller's own header.
	if _, err := typ.Parse(obj(`"headers":{"Authorization":"ApiKey k"}`)); err != nil {
		t.Errorf("Authorization without auth: %v", err)
	}

	for _, tc := range []struct{ name, extra, field string }{
		{"x-lerian", `"headers":{"X-Lerian-Event-Id":"x"}`, "sink.headers.X-Lerian-Event-Id"},
		{"x-webhook lowercase", `"headers":{"x-webhook-signature":"v1"}`, "sink.headers.x-webhook-signature"},
		{"webhook-", `"headers":{"Webhook-Id":"1"}`, "sink.headers.Webhook-Id"},
		{"traceparent", `"headers":{"TraceParent":"00-x"}`, "sink.headers.TraceParent"},
		{"tracestate", `"headers":{"tracestate":"a=b"}`, "sink.headers.tracestate"},
		{"content-type", `"headers":{"CONTENT-TYPE":"text/plain"}`, "sink.headers.CONTENT-TYPE"},
		{"content-length", `"headers":{"Content-Length":"1"}`, "sink.headers.Content-Length"},
		{"host", `"headers":{"Host":"evil.example"}`, "sink.headers.Host"},
		{"user-agent", `"headers":{"User-Agent":"me"}`, "sink.headers.User-Agent"},
		{"authorization beside auth", `"headers":{"authorization":"x"},"auth":{"type":"bearer","token":"t"}`, "sink.headers.authorization"},
		{"transport connection", `"headers":{"Connection":"x"}`, "sink.headers.Connection"},
		{"transport keep-alive", `"headers":{"Keep-Alive":"x"}`, "sink.headers.Keep-Alive"},
		{"transport proxy-connection", `"headers":{"Proxy-Connection":"x"}`, "sink.headers.Proxy-Connection"},
		{"transport proxy-authorization", `"headers":{"Proxy-Authorization":"x"}`, "sink.headers.Proxy-Authorization"},
		{"transport proxy-authenticate", `"headers":{"Proxy-Authenticate":"x"}`, "sink.headers.Proxy-Authenticate"},
		{"transport te", `"headers":{"TE":"x"}`, "sink.headers.TE"},
		{"transport trailer", `"headers":{"Trailer":"x"}`, "sink.headers.Trailer"},
		{"transport transfer-encoding", `"headers":{"Transfer-Encoding":"x"}`, "sink.headers.Transfer-Encoding"},
		{"transport upgrade", `"headers":{"Upgrade":"x"}`, "sink.headers.Upgrade"},
		{"transport expect", `"headers":{"Expect":"x"}`, "sink.headers.Expect"},
		{"transport content-encoding", `"headers":{"Content-Encoding":"x"}`, "sink.headers.Content-Encoding"},
		{"transport accept-encoding", `"headers":{"Accept-Encoding":"x"}`, "sink.headers.Accept-Encoding"},
		{"transport cookie", `"headers":{"Cookie":"x"}`, "sink.headers.Cookie"},
		{"space in name", `"headers":{"X Bad":"1"}`, "sink.headers"},
		{"colon in name", `"headers":{"X-Bad:":"1"}`, "sink.headers"},
		{"empty name", `"headers":{"":"1"}`, "sink.headers"},
		{"CRLF in value", `"headers":{"X-A":"1\r\nX-Injected: 2"}`, "sink.headers.X-A"},
		{"LF in value", `"headers":{"X-A":"1\nb"}`, "sink.headers.X-A"},
		{"NUL in value", `"headers":{"X-A":"1\u0000"}`, "sink.headers.X-A"},
		{"case-insensitive repeat", `"headers":{"X-A":"1","x-a":"2"}`, "sink.headers.x-a"},
		{"value not a string", `"headers":{"X-A":1}`, "sink.headers"},
		{"headers not an object", `"headers":["X-A"]`, "sink.headers"},
		{"auth type", `"auth":{"type":"digest"}`, "sink.auth.type"},
		{"basic without password", `"auth":{"type":"basic","username":"u"}`, "sink.auth.password"},
		{"basic without username", `"auth":{"type":"basic","password":"p"}`, "sink.auth.username"},
		{"colon in username", `"auth":{"type":"basic","username":"a:b","password":"p"}`, "sink.auth.username"},
		{"bearer with a password", `"auth":{"type":"bearer","token":"t","password":"p"}`, "sink.auth.password"},
		{"CRLF in token", `"auth":{"type":"bearer","token":"t\r\nX: y"}`, "sink.auth.token"},
		{"NUL in password", `"auth":{"type":"basic","username":"u","password":"p\u0000"}`, "sink.auth.password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := typ.Parse(obj(tc.extra))
			var fe *sink.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("err %v, want a FieldError on %s", err, tc.field)
			}
			for _, secret := range []string{`"t"`, `"p"`} {
				if strings.Contains(fe.Message, secret) {
					t.Errorf("message quotes a credential: %s", fe.Message)
				}
			}
		})
	}
	many := make([]string, MaxHeaders+1)
	for i := range many {
		many[i] = `"X-H` + strings.Repeat("a", i) + `":"v"`
	}
	if _, err := typ.Parse(obj(`"headers":{` + strings.Join(many, ",") + `}`)); err == nil {
		t.Errorf("%d headers accepted", len(many))
	}
}

func sameJSONText(raw json.RawMessage, want string) bool {
	var a, b any
	return json.Unmarshal(raw, &a) == nil && json.Unmarshal([]byte(want), &b) == nil && jsonString(a) == jsonString(b)
}

func jsonString(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestAuthMaskRoundTrip: reads show the password or token as "****"
// inside auth; sent back, the mask keeps the current credential for the
// same destination, auth type and user name, and is refused otherwise.
func TestAuthMaskRoundTrip(t *testing.T) {
	typ := newTestType(t, Options{})
	reg, err := sink.NewRegistry(typ)
	if err != nil {
		t.Fatal(err)
	}
	parse := func(raw string, current *sink.Config) (sink.Parsed, error) {
		o, err := reg.Object(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		return o.Parse(current)
	}
	ps, err := parse(`{"type":"webhook","url":"https://hooks.example.com/in","auth":{"type":"basic","username":"hub","password":"hunter2-long"}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	view, err := reg.Show("webhook", ps.Config.Public, ps.CredentialFields)
	if err != nil {
		t.Fatal(err)
	}
	shown, _ := json.Marshal(view)
	if strings.Contains(string(shown), "hunter2") || !strings.Contains(string(shown), `"password":"****"`) {
		t.Fatalf("read shows %s", shown)
	}
	if _, ok := view["password"]; ok {
		t.Errorf("the mask is also shown beside the url: %s", shown)
	}
	current := ps.Config
	back, err := parse(string(shown), &current)
	if err != nil || current.Differs(back.Config) {
		t.Fatalf("a read sent back: %v (differs %v)", err, err == nil && current.Differs(back.Config))
	}
	moved, err := parse(strings.Replace(string(shown), "/in", "/v2", 1), &current)
	if err != nil || !sameJSONText(moved.Config.Credentials, `{"password":"hunter2-long"}`) {
		t.Errorf("a new path on the same destination: %v", err)
	}
	for name, raw := range map[string]string{
		"another host":  strings.Replace(string(shown), "hooks.example.com", "evil.example.com", 1),
		"another user":  strings.Replace(string(shown), `"hub"`, `"root"`, 1),
		"another type":  `{"type":"webhook","url":"https://hooks.example.com/in","auth":{"type":"bearer","token":"****"}}`,
		"no current":    `{"type":"webhook","url":"https://hooks.example.com/in","auth":{"type":"bearer","token":"****"}}`,
		"create masked": string(shown),
	} {
		cur := &current
		if name == "no current" || name == "create masked" {
			cur = nil
		}
		_, err := parse(raw, cur)
		var inv *sink.InvalidError
		if !errors.As(err, &inv) || !strings.HasPrefix(inv.Field, "sink.auth.") {
			t.Errorf("%s: %v, want invalid sink.auth.*", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error quotes the password: %v", name, err)
		}
	}
}

// TestHeadersAndAuthArrive: every attempt and the probe carry the custom
// headers and the Authorization of auth, beside the hub's own headers.
func TestHeadersAndAuthArrive(t *testing.T) {
	rcv := startReceiver(t, nil)
	typ := newTestType(t, Options{AllowPrivate: true})
	for _, tc := range []struct{ auth, creds, want string }{
		{`{"type":"basic","username":"hub"}`, `{"password":"pa:ss word"}`, "Basic aHViOnBhOnNzIHdvcmQ="},
		{`{"type":"bearer"}`, `{"token":"tok.en-1"}`, "Bearer tok.en-1"},
	} {
		public := json.RawMessage(`{"url":"` + rcv.hookURL() + `","headers":{"X-Api-Version":"2","x-route":"blue"},"auth":` + tc.auth + `}`)
		s, err := typ.Open(sink.Config{Public: public, Credentials: json.RawMessage(tc.creds)}, []string{newSecret})
		if err != nil {
			t.Fatal(err)
		}
		before := len(rcv.Requests())
		if out := s.Deliver(t.Context(), testDelivery()); !out.OK {
			t.Fatalf("Deliver: %+v", out)
		}
		if err := s.Probe(t.Context(), sink.ProbeRequest{SubscriptionID: "s", TenantID: "acme", Timeout: time.Second}); err != nil {
			t.Fatalf("Probe: %v", err)
		}
		for i, r := range rcv.Requests()[before:] {
			if r.Header.Get("Authorization") != tc.want || r.Header.Get("X-Api-Version") != "2" || r.Header.Get("X-Route") != "blue" {
				t.Errorf("request %d: headers %v", i, r.Header)
			}
			if r.Header.Get("X-Webhook-Signature") == "" || r.Header.Get("Content-Type") == "" || r.Header.Get("X-Lerian-Event-Id") == "" {
				t.Errorf("request %d lost the hub's headers: %v", i, r.Header)
			}
		}
	}
}
