package kafka

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/testutil/testpki"
)

func TestParse(t *testing.T) {
	ca := string(testpki.MustCA(t, "parse test CA").CertPEM)
	typ := NewType(Options{})
	sasl := `"sasl":{"mechanism":"scram-sha-256","username":"bob","password":"` + testPassword + `"}`
	tests := []struct {
		name        string
		object      string
		field       string // "" when Parse must accept it
		destination string
		public      string
	}{
		{"minimal", `{"brokers":["Kafka-1.example.com"],"topic":"orders"}`, "",
			"kafka://kafka-1.example.com:9092/orders", `{"brokers":["kafka-1.example.com:9092"],"topic":"orders"}`},
		{"everything", `{"brokers":["b.example.com:9093","a.example.com:9093","b.example.com:9093"],"topic":"orders.v1","key":"subject","tls":true,"ca_cert":` + quote(ca) + `,` + sasl + `}`, "",
			"kafka://a.example.com:9093,b.example.com:9093/orders.v1", ""},
		{"key tenant is the default", `{"brokers":["[2606:4700::1]:9092"],"topic":"t","key":"tenant"}`, "",
			"kafka://[2606:4700::1]:9092/t", `{"brokers":["[2606:4700::1]:9092"],"topic":"t"}`},

		{"no brokers", `{"topic":"orders"}`, "sink.brokers", "", ""},
		{"empty brokers", `{"brokers":[],"topic":"orders"}`, "sink.brokers", "", ""},
		{"broker with a scheme", `{"brokers":["kafka://k.example.com:9092"],"topic":"orders"}`, "sink.brokers[0]", "", ""},
		{"broker with a bad port", `{"brokers":["k.example.com:99999"],"topic":"orders"}`, "sink.brokers[0]", "", ""},
		{"private broker", `{"brokers":["k.example.com:9092","10.0.0.1:9092"],"topic":"orders"}`, "sink.brokers[1]", "", ""},
		{"loopback broker", `{"brokers":["127.0.0.1:9092"],"topic":"orders"}`, "sink.brokers[0]", "", ""},
		{"no topic", `{"brokers":["k.example.com:9092"]}`, "sink.topic", "", ""},
		{"bad topic", `{"brokers":["k.example.com:9092"],"topic":"orders/created"}`, "sink.topic", "", ""},
		{"dot topic", `{"brokers":["k.example.com:9092"],"topic":".."}`, "sink.topic", "", ""},
		{"bad key", `{"brokers":["k.example.com:9092"],"topic":"t","key":"partition"}`, "sink.key", "", ""},
		{"tls a string", `{"brokers":["k.example.com:9092"],"topic":"t","tls":"yes"}`, "sink.tls", "", ""},
		{"ca_cert without tls", `{"brokers":["k.example.com:9092"],"topic":"t","ca_cert":` + quote(ca) + `}`, "sink.ca_cert", "", ""},
		{"ca_cert not PEM", `{"brokers":["k.example.com:9092"],"topic":"t","tls":true,"ca_cert":"hello"}`, "sink.ca_cert", "", ""},
		{"sasl not an object", `{"brokers":["k.example.com:9092"],"topic":"t","sasl":"PLAIN"}`, "sink.sasl", "", ""},
		{"sasl mechanism unknown", `{"brokers":["k.example.com:9092"],"topic":"t","sasl":{"mechanism":"GSSAPI","username":"bob","password":"` + testPassword + `"}}`, "sink.sasl.mechanism", "", ""},
		{"sasl without password", `{"brokers":["k.example.com:9092"],"topic":"t","sasl":{"mechanism":"PLAIN","username":"bob"}}`, "sink.sasl.password", "", ""},
		{"sasl with an extra field", `{"brokers":["k.example.com:9092"],"topic":"t","sasl":{"mechanism":"PLAIN","username":"bob","password":"` + testPassword + `","token":"x"}}`, "sink.sasl.token", "", ""},
		{"unknown field", `{"brokers":["k.example.com:9092"],"topic":"t","acks":"1"}`, "sink.acks", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := typ.Parse(json.RawMessage(`{"type":"kafka",` + tc.object[1:]))
			if tc.field != "" {
				var fe *sink.FieldError
				if !errors.As(err, &fe) || fe.Field != tc.field {
					t.Fatalf("Parse = %v, want a FieldError on %s", err, tc.field)
				}
				if strings.Contains(err.Error(), testPassword) {
					t.Fatalf("error %q quotes the password", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if cfg.Destination != tc.destination || tc.public != "" && string(cfg.Public) != tc.public {
				t.Errorf("Destination %q, Public %s; want %q, %s", cfg.Destination, cfg.Public, tc.destination, tc.public)
			}
			if strings.Contains(string(cfg.Public), testPassword) {
				t.Errorf("Public %s holds the password", cfg.Public)
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

// TestReadsMaskAndRestoreThePassword: reads show the SASL password masked
// in sink.sasl; the read sent back keeps it for the same brokers and user,
// and is refused for other brokers and on create.
func TestReadsMaskAndRestoreThePassword(t *testing.T) {
	reg, err := sink.NewRegistry(NewType(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	parse := func(raw []byte, current *sink.Config) (sink.Parsed, error) {
		obj, err := reg.Object(raw)
		if err != nil {
			t.Fatal(err)
		}
		return obj.Parse(current)
	}
	stored, err := parse([]byte(`{"type":"kafka","brokers":["a.example.com:9092","b.example.com:9092"],"topic":"orders","sasl":{"mechanism":"PLAIN","username":"bob","password":"`+testPassword+`"}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	view, err := reg.Show(Name, stored.Config.Public, stored.CredentialFields)
	if err != nil {
		t.Fatal(err)
	}
	read, _ := json.Marshal(view)
	if strings.Contains(string(read), testPassword) || !strings.Contains(string(read), `"password":"****"`) {
		t.Fatalf("read %s does not show the password masked in sasl", read)
	}
	again, err := parse(read, &stored.Config)
	if err != nil {
		t.Fatalf("Parse of the read: %v", err)
	}
	if stored.Config.Differs(again.Config) {
		t.Fatal("the read sent back changed the configuration")
	}
	// Brokers listed in another order, another topic: kept.
	var edited map[string]any
	_ = json.Unmarshal(read, &edited)
	edited["brokers"], edited["topic"] = []string{"b.example.com:9092", "a.example.com:9092"}, "invoices"
	raw, _ := json.Marshal(edited)
	if _, err := parse(raw, &stored.Config); err != nil {
		t.Errorf("the read for another topic of the same brokers: %v", err)
	}
	edited["brokers"] = []string{"attacker.example.com:9092"}
	raw, _ = json.Marshal(edited)
	for what, current := range map[string]*sink.Config{"other brokers": &stored.Config, "create": nil} {
		_, err := parse(raw, current)
		var invalid *sink.InvalidError
		if !errors.As(err, &invalid) || invalid.Field != "sink.sasl.password" {
			t.Errorf("%s with the mask: %v, want an invalid sink.sasl.password", what, err)
		}
	}
}

func TestRecordKeys(t *testing.T) {
	d := sink.Delivery{TenantID: "acme", Subject: "tx-1", EventID: "evt-1", Payload: []byte("x")}
	noSubject := d
	noSubject.Subject = ""
	for _, tc := range []struct {
		keyBy string
		d     sink.Delivery
		want  string
	}{
		{"", d, "acme"}, {KeyTenant, d, "acme"}, {KeySubject, d, "tx-1"}, {KeyEventID, d, "evt-1"},
		{KeyNone, d, ""}, {KeySubject, noSubject, ""},
	} {
		r := Record("t", tc.keyBy, tc.d)
		if string(r.Key) != tc.want || tc.want == "" && r.Key != nil {
			t.Errorf("key by %q = %q, want %q", tc.keyBy, r.Key, tc.want)
		}
	}
}
