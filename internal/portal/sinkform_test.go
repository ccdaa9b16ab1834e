package portal

import (
	"encoding/json"
	"net/url"
	"reflect"
	"slices"
	"testing"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// form is a posted form of sink fields, by path.
func form(pairs ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		v.Set(inputName(pairs[i]), pairs[i+1])
	}
	return v
}

func jsonObject(t *testing.T, text string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return m
}

// TestSinkObjectFromTheForm holds what each sink type's form posts to the
// API: the sink object of SPEC §4, the fields of other choices left out,
// and on an edit a credential left empty sent as the mask, which keeps
// the stored one.
func TestSinkObjectFromTheForm(t *testing.T) {
	for _, tc := range []struct {
		name, sinkType string
		form           url.Values
		current        string // the stored sink as reads show it; "" on create
		want           string
	}{
		{name: "webhook", sinkType: "webhook", form: form("url", " https://example.com/hook ", "auth.type", ""),
			want: `{"type":"webhook","url":"https://example.com/hook"}`},
		{name: "webhook basic auth, other auths' fields ignored", sinkType: "webhook",
			form: form("url", "https://example.com/hook", "auth.type", "basic", "auth.username", "ops", "auth.password", "pw", "auth.token", "stray"),
			want: `{"type":"webhook","url":"https://example.com/hook","auth":{"type":"basic","username":"ops","password":"pw"}}`},
		{name: "webhook oauth2 and a CA", sinkType: "webhook",
			form: form("url", "https://example.com/hook", "auth.type", "oauth2_client_credentials", "auth.token_url", "https://id.example.com/token",
				"auth.client_id", "hub", "auth.client_secret", "cs", "auth.scope", "events", "ca_cert", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"),
			want: `{"type":"webhook","url":"https://example.com/hook","ca_cert":"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
				"auth":{"type":"oauth2_client_credentials","token_url":"https://id.example.com/token","client_id":"hub","client_secret":"cs","scope":"events"}}`},
		{name: "webhook mtls", sinkType: "webhook",
			form: form("url", "https://example.com/hook", "auth.type", "mtls", "auth.client_cert", "CERT", "auth.client_key", "KEY"),
			want: `{"type":"webhook","url":"https://example.com/hook","auth":{"type":"mtls","client_cert":"CERT","client_key":"KEY"}}`},
		{name: "webhook edit keeps the token and the headers the form does not show", sinkType: "webhook",
			form:    form("url", "https://example.com/v2", "auth.type", "bearer", "auth.token", ""),
			current: `{"type":"webhook","url":"https://example.com/hook","headers":{"X-Env":"prod"},"auth":{"type":"bearer","token":"****"}}`,
			want:    `{"type":"webhook","url":"https://example.com/v2","headers":{"X-Env":"prod"},"auth":{"type":"bearer","token":"****"}}`},
		{name: "webhook edit drops the auth", sinkType: "webhook",
			form:    form("url", "https://example.com/hook", "auth.type", ""),
			current: `{"type":"webhook","url":"https://example.com/hook","auth":{"type":"bearer","token":"****"}}`,
			want:    `{"type":"webhook","url":"https://example.com/hook"}`},
		{name: "webhook edit to another auth needs its own secret", sinkType: "webhook",
			form:    form("url", "https://example.com/hook", "auth.type", "basic", "auth.username", "ops"),
			current: `{"type":"webhook","url":"https://example.com/hook","auth":{"type":"bearer","token":"****"}}`,
			want:    `{"type":"webhook","url":"https://example.com/hook","auth":{"type":"basic","username":"ops"}}`},
		{name: "sqs", sinkType: "sqs",
			form: form("queue_url", "https://sqs.us-east-1.amazonaws.com/1/orders", "region", "us-east-1", "access_key_id", "AKIA", "secret_access_key", "s3cr3t"),
			want: `{"type":"sqs","queue_url":"https://sqs.us-east-1.amazonaws.com/1/orders","region":"us-east-1","access_key_id":"AKIA","secret_access_key":"s3cr3t"}`},
		{name: "sqs edit keeps both keys", sinkType: "sqs",
			form:    form("queue_url", "https://sqs.us-east-1.amazonaws.com/1/orders", "region", "us-east-1", "endpoint", "http://127.0.0.1:4100"),
			current: `{"type":"sqs","queue_url":"https://sqs.us-east-1.amazonaws.com/1/orders","region":"us-east-1","access_key_id":"****","secret_access_key":"****"}`,
			want:    `{"type":"sqs","queue_url":"https://sqs.us-east-1.amazonaws.com/1/orders","region":"us-east-1","endpoint":"http://127.0.0.1:4100","access_key_id":"****","secret_access_key":"****"}`},
		{name: "sqs edit replaces the secret", sinkType: "sqs",
			form:    form("queue_url", "https://q", "region", "eu-west-1", "secret_access_key", "new"),
			current: `{"type":"sqs","queue_url":"https://q","region":"eu-west-1","access_key_id":"****","secret_access_key":"****"}`,
			want:    `{"type":"sqs","queue_url":"https://q","region":"eu-west-1","access_key_id":"****","secret_access_key":"new"}`},
		{name: "rabbitmq", sinkType: "rabbitmq",
			form: form("url", "amqps://u:p@broker/vh", "exchange", "events", "routing_key", ""),
			want: `{"type":"rabbitmq","url":"amqps://u:p@broker/vh","exchange":"events"}`},
		{name: "rabbitmq edit sends the masked url back", sinkType: "rabbitmq",
			form:    form("url", "amqps://u:****@broker/vh", "exchange", "events", "routing_key", "all"),
			current: `{"type":"rabbitmq","url":"amqps://u:****@broker/vh","exchange":"events"}`,
			want:    `{"type":"rabbitmq","url":"amqps://u:****@broker/vh","exchange":"events","routing_key":"all"}`},
		{name: "eventbridge", sinkType: "eventbridge",
			form: form("event_bus", "default", "region", "us-east-1", "detail_type", "ledger", "access_key_id", "AKIA", "secret_access_key", "s"),
			want: `{"type":"eventbridge","event_bus":"default","region":"us-east-1","detail_type":"ledger","access_key_id":"AKIA","secret_access_key":"s"}`},
		{name: "kafka", sinkType: "kafka",
			form: form("brokers", "k1:9092, k2:9092\nk3:9092", "topic", "orders", "key", "subject", "tls", "on",
				"sasl.mechanism", "SCRAM-SHA-512", "sasl.username", "hub", "sasl.password", "pw"),
			want: `{"type":"kafka","brokers":["k1:9092","k2:9092","k3:9092"],"topic":"orders","key":"subject","tls":true,
				"sasl":{"mechanism":"SCRAM-SHA-512","username":"hub","password":"pw"}}`},
		{name: "kafka without sasl, its fields ignored", sinkType: "kafka",
			form: form("brokers", "k1:9092", "topic", "orders", "key", "", "sasl.mechanism", "", "sasl.username", "stray"),
			want: `{"type":"kafka","brokers":["k1:9092"],"topic":"orders"}`},
		{name: "kafka edit keeps the password", sinkType: "kafka",
			form:    form("brokers", "k1:9092", "topic", "invoices", "sasl.mechanism", "PLAIN", "sasl.username", "hub"),
			current: `{"type":"kafka","brokers":["k1:9092"],"topic":"orders","sasl":{"mechanism":"PLAIN","username":"hub","password":"****"}}`,
			want:    `{"type":"kafka","brokers":["k1:9092"],"topic":"invoices","sasl":{"mechanism":"PLAIN","username":"hub","password":"****"}}`},
		{name: "pubsub", sinkType: "pubsub",
			form: form("project", "acme", "topic", "events", "credentials_json", `{"type":"service_account"}`, "endpoint", "127.0.0.1:8085"),
			want: `{"type":"pubsub","project":"acme","topic":"events","credentials_json":"{\"type\":\"service_account\"}","endpoint":"127.0.0.1:8085"}`},
		{name: "pubsub edit keeps the key", sinkType: "pubsub",
			form:    form("project", "acme", "topic", "events"),
			current: `{"type":"pubsub","project":"acme","topic":"events","credentials_json":"****"}`,
			want:    `{"type":"pubsub","project":"acme","topic":"events","credentials_json":"****"}`},
		{name: "nats without a login", sinkType: "nats",
			form: form("url", "nats://127.0.0.1:4222", "subject", "orders", "credentials.login", "", "credentials.token", "stray"),
			want: `{"type":"nats","url":"nats://127.0.0.1:4222","subject":"orders"}`},
		{name: "nats user and password", sinkType: "nats",
			form: form("url", "tls://n:4222", "subject", "orders", "credentials.login", "password", "credentials.username", "hub", "credentials.password", "pw"),
			want: `{"type":"nats","url":"tls://n:4222","subject":"orders","credentials":{"username":"hub","password":"pw"}}`},
		{name: "nats edit keeps the creds file", sinkType: "nats",
			form:    form("url", "tls://n:4222", "subject", "orders", "credentials.login", "creds"),
			current: `{"type":"nats","url":"tls://n:4222","subject":"orders","credentials":{"creds":"****"}}`,
			want:    `{"type":"nats","url":"tls://n:4222","subject":"orders","credentials":{"creds":"****"}}`},
		{name: "s3", sinkType: "s3",
			form: form("bucket", "events", "region", "us-east-1", "prefix", "hub/", "endpoint", "http://127.0.0.1:9000", "path_style", "on",
				"access_key_id", "AKIA", "secret_access_key", "s"),
			want: `{"type":"s3","bucket":"events","region":"us-east-1","prefix":"hub/","endpoint":"http://127.0.0.1:9000","path_style":true,
				"access_key_id":"AKIA","secret_access_key":"s"}`},
		{name: "pull", sinkType: "pull", form: form(), want: `{"type":"pull"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, ok := sinkTypeNamed(tc.sinkType)
			if !ok {
				t.Fatalf("no form for %s", tc.sinkType)
			}
			var current map[string]any
			if tc.current != "" {
				current = jsonObject(t, tc.current)
			}
			got := sinkObject(st, tc.form, current)
			// Through JSON, as the API receives it.
			raw, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if want := jsonObject(t, tc.want); !reflect.DeepEqual(jsonObject(t, string(raw)), want) {
				t.Errorf("sink object\n got %s\nwant %s", raw, tc.want)
			}
		})
	}
}

// TestEverySinkTypeOfTheSpecHasAForm keeps the table whole: SPEC §4's
// types, each field's choice known, and no two inputs of a type alike.
func TestEverySinkTypeOfTheSpecHasAForm(t *testing.T) {
	var names []string
	for _, st := range sinkTypes {
		names = append(names, st.Name)
		seen := map[string]bool{}
		for _, f := range st.Fields {
			if seen[f.Path] {
				t.Errorf("%s: two fields at %s", st.Name, f.Path)
			}
			seen[f.Path] = true
			if f.Label == "" {
				t.Errorf("%s: field %s has no label", st.Name, f.Path)
			}
			if f.When != nil && !seen[f.When.Path] {
				t.Errorf("%s: field %s depends on %s, which is not a field before it", st.Name, f.Path, f.When.Path)
			}
		}
	}
	want := []string{"webhook", "sqs", "rabbitmq", "eventbridge", "kafka", "pubsub", "nats", "s3", "pull"}
	if !slices.Equal(names, want) {
		t.Errorf("sink types %v, want %v", names, want)
	}
}

// TestFormValuesOfAStoredSink: an edit form starts from the stored sink,
// credentials never among its values, and posted back unchanged it is the
// stored sink again.
func TestFormValuesOfAStoredSink(t *testing.T) {
	for _, tc := range []struct {
		sinkType, stored string
		want             map[string]string
	}{
		{sinkType: "kafka", stored: `{"type":"kafka","brokers":["k1:9092","k2:9092"],"topic":"orders","tls":true,"sasl":{"mechanism":"PLAIN","username":"hub","password":"****"}}`,
			want: map[string]string{"brokers": "k1:9092, k2:9092", "topic": "orders", "tls": "on", "sasl.mechanism": "PLAIN", "sasl.username": "hub"}},
		{sinkType: "nats", stored: `{"type":"nats","url":"nats://n:4222","subject":"s","credentials":{"token":"****"}}`,
			want: map[string]string{"url": "nats://n:4222", "subject": "s", "credentials.login": "token"}},
		{sinkType: "nats", stored: `{"type":"nats","url":"nats://n:4222","subject":"s","credentials":{"username":"u","password":"****"}}`,
			want: map[string]string{"url": "nats://n:4222", "subject": "s", "credentials.login": "password", "credentials.username": "u"}},
		{sinkType: "webhook", stored: `{"type":"webhook","url":"https://e/h","auth":{"type":"basic","username":"u","password":"****"}}`,
			want: map[string]string{"url": "https://e/h", "auth.type": "basic", "auth.username": "u"}},
		{sinkType: "s3", stored: `{"type":"s3","bucket":"b","region":"r","access_key_id":"****","secret_access_key":"****"}`,
			want: map[string]string{"bucket": "b", "region": "r"}},
	} {
		st, _ := sinkTypeNamed(tc.sinkType)
		stored := jsonObject(t, tc.stored)
		values := formValues(st, stored)
		want := url.Values{}
		for path, v := range tc.want {
			want.Set(inputName(path), v)
		}
		if !reflect.DeepEqual(values, want) {
			t.Errorf("%s: form values %v, want %v", tc.stored, values, want)
		}
		if back := sinkObject(st, values, stored); !reflect.DeepEqual(jsonObject(t, mustJSON(t, back)), stored) {
			t.Errorf("%s posted back unchanged is %v", tc.stored, back)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestErrorInput places the API's complaints beside the inputs they are
// about.
func TestErrorInput(t *testing.T) {
	kafka, _ := sinkTypeNamed("kafka")
	nats, _ := sinkTypeNamed("nats")
	for _, tc := range []struct {
		st          sinkType
		field, want string
	}{
		{kafka, "name", "name"},
		{kafka, "event_types", "event_types"},
		{kafka, "sink.topic", "sink.topic"},
		{kafka, "sink.brokers[1]", "sink.brokers"},
		{kafka, "sink.sasl.password", "sink.sasl.password"},
		{kafka, "sink.sasl", "sink.sasl.mechanism"},
		{nats, "sink.credentials", "sink.credentials.login"},
		{kafka, "sink", ""},
		{kafka, "sink.type", ""},
		{kafka, "ordering", ""},
	} {
		if got := errorInput(tc.st, tc.field, commonInputs); got != tc.want {
			t.Errorf("%s error on %q goes to %q, want %q", tc.st.Name, tc.field, got, tc.want)
		}
	}
}

// TestNewFormNeverShowsACredential: a refused form is shown again with
// what was typed, but no credential, and says which are stored.
func TestNewFormNeverShowsACredential(t *testing.T) {
	kafka, _ := sinkTypeNamed("kafka")
	posted := form("brokers", "k1:9092", "topic", "orders", "sasl.mechanism", "PLAIN", "sasl.username", "hub", "sasl.password", "typed-password")
	stored := jsonObject(t, `{"type":"kafka","brokers":["k1:9092"],"topic":"orders","sasl":{"mechanism":"PLAIN","username":"hub","password":"****"}}`)
	f := newForm(kafka, posted, stored, &hubapi.ValidationError{Field: "sink.topic", Code: "invalid_sink", Message: "invalid sink: topic is bad"})
	var seen bool
	for _, g := range f.Groups {
		for _, ff := range g.Fields {
			switch ff.Path {
			case "sasl.password":
				seen = true
				if ff.Value != "" || !ff.Stored || ff.RequiredInput {
					t.Errorf("the password field is %+v: want no value, stored, not required", ff)
				}
			case "topic":
				if ff.Error != "invalid sink: topic is bad" || ff.Code != "invalid_sink" || ff.Value != "orders" {
					t.Errorf("the topic field is %+v", ff)
				}
			}
		}
	}
	if !seen {
		t.Fatal("the form has no password field")
	}
}

// TestSinkRowsShowTheSinkAsReadsDo: labels for the form's fields,
// credentials as the mask, anything else as JSON.
func TestSinkRowsShowTheSinkAsReadsDo(t *testing.T) {
	got := sinkRows("webhook", jsonObject(t, `{"type":"webhook","url":"https://e/h","headers":{"X-Env":"prod"},"auth":{"type":"bearer","token":"****"}}`))
	want := []sinkRow{{"Type", "Webhook"}, {"Endpoint URL", "https://e/h"}, {"Endpoint authentication", "Bearer token"},
		{"Token", "****"}, {"headers", `{"X-Env":"prod"}`}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
}
