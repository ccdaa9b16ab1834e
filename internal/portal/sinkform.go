package portal

import (
	"encoding/json"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// The subscription form's sink fields: one table of every sink type of
// SPEC §4 and its fields, from which the form is drawn, the posted form is
// turned into the sink object the API takes, and a stored sink (as reads
// show it, credentials masked) is turned back into the form's values.

// fieldKind is how a sink field is entered.
type fieldKind string

const (
	fieldText fieldKind = "text"
	fieldURL  fieldKind = "url"
	// fieldList is a list of strings, entered comma-separated or one per line.
	fieldList fieldKind = "list"
	// fieldPEM is public multi-line text, such as a CA certificate.
	fieldPEM fieldKind = "pem"
	// fieldSecret and fieldSecretText are credentials: never shown back,
	// and left empty on an edit they keep the stored one.
	fieldSecret     fieldKind = "secret"
	fieldSecretText fieldKind = "secret-text"
	fieldChoice     fieldKind = "choice"
	fieldCheck      fieldKind = "check"
)

// choice is one option of a fieldChoice; Value "" is "none" or the default.
type choice struct {
	Value, Label string
}

// condition says a field belongs to the sink only while a choice field
// holds one of Values.
type condition struct {
	Path   string
	Values []string
}

// sinkField is one field of a sink type's form.
type sinkField struct {
	// Path is where the value sits in the sink object, dotted for nested
	// objects ("sasl.password").
	Path        string
	Label, Help string
	Kind        fieldKind
	// Required fields are refused empty by the hub; conditional ones only
	// while their condition holds, which the label says.
	Required    bool
	Placeholder string
	Choices     []choice
	When        *condition
	// Local choices pick which of the fields after them apply; they are
	// not part of the sink object (a NATS login is one of three shapes).
	Local bool
}

// Secret reports whether the field holds a credential.
func (f sinkField) Secret() bool { return f.Kind == fieldSecret || f.Kind == fieldSecretText }

// sinkType is one sink type's form.
type sinkType struct {
	Name, Label, Help string
	Fields            []sinkField
}

// The AWS sinks share how they sign in.
var awsCredentialFields = []sinkField{
	{Path: "access_key_id", Label: "Access key ID", Kind: fieldSecret, Required: true,
		Help: "Of an IAM user allowed to send there. Kept encrypted and never shown again."},
	{Path: "secret_access_key", Label: "Secret access key", Kind: fieldSecret, Required: true,
		Help: "Kept encrypted and never shown again."},
}

var awsEndpointField = sinkField{Path: "endpoint", Label: "Endpoint", Kind: fieldURL, Placeholder: "https://…",
	Help: "Optional: a private endpoint or a local stand-in; empty is AWS's own for the region."}

// sinkTypes are the sink types of SPEC §4, in the order the form offers them.
var sinkTypes = []sinkType{
	{Name: "webhook", Label: "Webhook", Help: "An HTTPS endpoint of yours receives each event as a signed POST.",
		Fields: []sinkField{
			{Path: "url", Label: "Endpoint URL", Kind: fieldURL, Required: true, Placeholder: "https://example.com/webhooks",
				Help: "The hub sends a verification request first; the endpoint must answer it."},
			{Path: "auth.type", Label: "Endpoint authentication", Kind: fieldChoice,
				Help: "Optional: how the hub signs in to your endpoint, besides signing each request.",
				Choices: []choice{{"", "None"}, {"basic", "Basic (user name and password)"}, {"bearer", "Bearer token"},
					{"oauth2_client_credentials", "OAuth 2.0 client credentials"}, {"mtls", "Client certificate (mTLS)"}}},
			{Path: "auth.username", Label: "User name", Kind: fieldText, Required: true, When: &condition{"auth.type", []string{"basic"}}},
			{Path: "auth.password", Label: "Password", Kind: fieldSecret, Required: true, When: &condition{"auth.type", []string{"basic"}}},
			{Path: "auth.token", Label: "Token", Kind: fieldSecret, Required: true, When: &condition{"auth.type", []string{"bearer"}},
				Help: "Sent as Authorization: Bearer."},
			{Path: "auth.token_url", Label: "Token URL", Kind: fieldURL, Required: true, When: &condition{"auth.type", []string{"oauth2_client_credentials"}}},
			{Path: "auth.client_id", Label: "Client ID", Kind: fieldText, Required: true, When: &condition{"auth.type", []string{"oauth2_client_credentials"}}},
			{Path: "auth.client_secret", Label: "Client secret", Kind: fieldSecret, Required: true, When: &condition{"auth.type", []string{"oauth2_client_credentials"}}},
			{Path: "auth.scope", Label: "Scope", Kind: fieldText, When: &condition{"auth.type", []string{"oauth2_client_credentials"}}, Help: "Optional."},
			{Path: "auth.audience", Label: "Audience", Kind: fieldText, When: &condition{"auth.type", []string{"oauth2_client_credentials"}}, Help: "Optional."},
			{Path: "auth.client_cert", Label: "Client certificate (PEM)", Kind: fieldPEM, Required: true, When: &condition{"auth.type", []string{"mtls"}}},
			{Path: "auth.client_key", Label: "Client key (PEM)", Kind: fieldSecretText, Required: true, When: &condition{"auth.type", []string{"mtls"}}},
			{Path: "ca_cert", Label: "CA certificate (PEM)", Kind: fieldPEM,
				Help: "Optional: trust a private certificate authority for this endpoint only."},
		}},
	{Name: "sqs", Label: "Amazon SQS", Help: "Each event becomes a message on an SQS queue of yours.",
		Fields: append([]sinkField{
			{Path: "queue_url", Label: "Queue URL", Kind: fieldURL, Required: true, Placeholder: "https://sqs.us-east-1.amazonaws.com/123456789012/orders",
				Help: "A FIFO queue (.fifo) keeps each tenant's events in order."},
			{Path: "region", Label: "Region", Kind: fieldText, Required: true, Placeholder: "us-east-1"},
		}, append(slices.Clone(awsCredentialFields), awsEndpointField)...)},
	{Name: "rabbitmq", Label: "RabbitMQ", Help: "Each event is published to an exchange of yours, with publisher confirms.",
		Fields: []sinkField{
			{Path: "url", Label: "Broker URL", Kind: fieldText, Required: true, Placeholder: "amqps://user:password@broker.example.com/vhost",
				Help: "amqp:// or amqps://, with the user and password. Once saved, the password shows as ****: leave it so to keep it."},
			{Path: "exchange", Label: "Exchange", Kind: fieldText, Required: true},
			{Path: "routing_key", Label: "Routing key", Kind: fieldText, Help: "Optional: empty routes each event by its type."},
		}},
	{Name: "eventbridge", Label: "Amazon EventBridge", Help: "Each event is put on an event bus of yours as a CloudEvent.",
		Fields: append([]sinkField{
			{Path: "event_bus", Label: "Event bus", Kind: fieldText, Required: true, Placeholder: "default",
				Help: "The bus's name or ARN."},
			{Path: "region", Label: "Region", Kind: fieldText, Required: true, Placeholder: "us-east-1"},
			{Path: "detail_type", Label: "Detail type", Kind: fieldText, Help: "Optional: empty is each event's type."},
		}, append(slices.Clone(awsCredentialFields), awsEndpointField)...)},
	{Name: "kafka", Label: "Apache Kafka", Help: "Each event is produced to a topic of your Kafka cluster.",
		Fields: []sinkField{
			{Path: "brokers", Label: "Brokers", Kind: fieldList, Required: true, Placeholder: "kafka-1.example.com:9092, kafka-2.example.com:9092",
				Help: "host:port, comma-separated: one is enough, the others are learnt from it."},
			{Path: "topic", Label: "Topic", Kind: fieldText, Required: true},
			{Path: "key", Label: "Record key", Kind: fieldChoice, Help: "What the records are keyed by, which decides their partition.",
				Choices: []choice{{"", "The tenant (default)"}, {"subject", "The event's subject"}, {"event_id", "The event's id"}, {"none", "No key"}}},
			{Path: "tls", Label: "Connect with TLS", Kind: fieldCheck},
			{Path: "ca_cert", Label: "CA certificate (PEM)", Kind: fieldPEM, Help: "Optional, with TLS: trust a private certificate authority."},
			{Path: "sasl.mechanism", Label: "SASL sign-in", Kind: fieldChoice,
				Choices: []choice{{"", "None"}, {"PLAIN", "PLAIN"}, {"SCRAM-SHA-256", "SCRAM-SHA-256"}, {"SCRAM-SHA-512", "SCRAM-SHA-512"}}},
			{Path: "sasl.username", Label: "User name", Kind: fieldText, Required: true, When: &condition{"sasl.mechanism", []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}}},
			{Path: "sasl.password", Label: "Password", Kind: fieldSecret, Required: true, When: &condition{"sasl.mechanism", []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}}},
		}},
	{Name: "pubsub", Label: "Google Cloud Pub/Sub", Help: "Each event is published to a Pub/Sub topic of yours.",
		Fields: []sinkField{
			{Path: "project", Label: "Project", Kind: fieldText, Required: true},
			{Path: "topic", Label: "Topic", Kind: fieldText, Required: true},
			{Path: "credentials_json", Label: "Service account key (JSON)", Kind: fieldSecretText,
				Help: "Optional: a key of a service account allowed to publish. Kept encrypted and never shown again."},
			{Path: "endpoint", Label: "Endpoint", Kind: fieldText, Placeholder: "pubsub-emulator:8085",
				Help: "Optional: host:port of an emulator or a private endpoint. Without a service account key, the hub reaches it without authentication."},
		}},
	{Name: "nats", Label: "NATS JetStream", Help: "Each event is published to a subject a JetStream stream of yours captures.",
		Fields: []sinkField{
			{Path: "url", Label: "Server URL", Kind: fieldText, Required: true, Placeholder: "tls://nats.example.com:4222",
				Help: "nats:// or tls://."},
			{Path: "subject", Label: "Subject", Kind: fieldText, Required: true, Help: "A stream must capture it."},
			{Path: "credentials.login", Label: "Sign-in", Kind: fieldChoice, Local: true,
				Choices: []choice{{"", "None"}, {"token", "Token"}, {"password", "User name and password"}, {"creds", "Credentials file"}}},
			{Path: "credentials.token", Label: "Token", Kind: fieldSecret, Required: true, When: &condition{"credentials.login", []string{"token"}}},
			{Path: "credentials.username", Label: "User name", Kind: fieldText, Required: true, When: &condition{"credentials.login", []string{"password"}}},
			{Path: "credentials.password", Label: "Password", Kind: fieldSecret, Required: true, When: &condition{"credentials.login", []string{"password"}}},
			{Path: "credentials.creds", Label: "Credentials file", Kind: fieldSecretText, Required: true, When: &condition{"credentials.login", []string{"creds"}},
				Help: "The content of a .creds file: its JWT and key seed."},
		}},
	{Name: "s3", Label: "Amazon S3", Help: "Each event is written as an object to a bucket of yours.",
		Fields: append([]sinkField{
			{Path: "bucket", Label: "Bucket", Kind: fieldText, Required: true},
			{Path: "region", Label: "Region", Kind: fieldText, Required: true, Placeholder: "us-east-1"},
			{Path: "prefix", Label: "Key prefix", Kind: fieldText, Placeholder: "events/",
				Help: "Optional: objects are written at <prefix><tenant>/<yyyy>/<mm>/<dd>/<hh>/<event id>."},
		}, append(slices.Clone(awsCredentialFields), awsEndpointField,
			sinkField{Path: "path_style", Label: "Path-style addressing", Kind: fieldCheck,
				Help: "For S3-compatible stores that name the bucket in the path rather than the host."})...)},
	{Name: "pull", Label: "Pull", Help: "Nothing is sent: your code reads the events with GET /v1/events when it is ready."},
}

// sinkTypeNamed is the form of a sink type, false for a type it has not.
func sinkTypeNamed(name string) (sinkType, bool) {
	i := slices.IndexFunc(sinkTypes, func(t sinkType) bool { return t.Name == name })
	if i < 0 {
		return sinkType{}, false
	}
	return sinkTypes[i], true
}

// inputName is a sink field's name in the posted form.
func inputName(path string) string { return "sink." + path }

// applies reports whether f is part of the sink object the form values
// describe: always, or while its choice holds one of its values.
func (f sinkField) applies(value func(path string) string) bool {
	return f.When == nil || slices.Contains(f.When.Values, value(f.When.Path))
}

// governs reports whether the form decides the top-level key of the sink
// object: every other key of a stored sink (a webhook's headers, which the
// API sets) is kept as it is by an edit.
func (t sinkType) governs(key string) bool {
	return slices.ContainsFunc(t.Fields, func(f sinkField) bool {
		return !f.Local && strings.SplitN(f.Path, ".", 2)[0] == key
	})
}

// sinkObject is the sink object a posted form describes. current is the
// stored sink as reads show it (credentials masked), nil on create: a
// credential left empty keeps the stored one, which the API is told by
// sending the mask back in its place.
func sinkObject(t sinkType, form url.Values, current map[string]any) map[string]any {
	obj := map[string]any{}
	for key, v := range current {
		if key != "type" && !t.governs(key) {
			obj[key] = v
		}
	}
	obj["type"] = t.Name
	value := func(path string) string { return strings.TrimSpace(form.Get(inputName(path))) }
	for _, f := range t.Fields {
		if f.Local || !f.applies(value) {
			continue
		}
		v := value(f.Path)
		switch {
		case f.Secret():
			if v == "" && lookup(current, f.Path) == hubapi.Masked {
				v = hubapi.Masked
			}
			if v != "" {
				setPath(obj, f.Path, v)
			}
		case f.Kind == fieldList:
			if items := splitList(v); len(items) > 0 {
				setPath(obj, f.Path, items)
			}
		case f.Kind == fieldCheck:
			if v != "" {
				setPath(obj, f.Path, true)
			}
		case v != "":
			setPath(obj, f.Path, v)
		}
	}
	return obj
}

// formValues are the form's values for a stored sink (as reads show it):
// credentials are never among them.
func formValues(t sinkType, current map[string]any) url.Values {
	values := url.Values{}
	for _, f := range t.Fields {
		v := lookup(current, f.Path)
		var text string
		switch {
		case f.Local:
			text = localChoice(t, f, current)
		case f.Secret():
			continue
		case f.Kind == fieldList:
			if items, ok := v.([]any); ok {
				parts := make([]string, 0, len(items))
				for _, item := range items {
					if s, ok := item.(string); ok {
						parts = append(parts, s)
					}
				}
				text = strings.Join(parts, ", ")
			}
		case f.Kind == fieldCheck:
			if b, ok := v.(bool); ok && b {
				text = "on"
			}
		default:
			text, _ = v.(string)
		}
		if text != "" {
			values.Set(inputName(f.Path), text)
		}
	}
	return values
}

// localChoice is the value of a local choice that the stored sink
// implies: the first whose fields the sink holds.
func localChoice(t sinkType, local sinkField, current map[string]any) string {
	for _, c := range local.Choices {
		for _, f := range t.Fields {
			if f.When != nil && f.When.Path == local.Path && slices.Contains(f.When.Values, c.Value) && lookup(current, f.Path) != nil {
				return c.Value
			}
		}
	}
	return ""
}

// lookup is the value at a dotted path of a sink object, nil when absent.
func lookup(obj map[string]any, path string) any {
	var v any = obj
	for _, key := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[key]
	}
	return v
}

func setPath(obj map[string]any, path string, v any) {
	keys := strings.Split(path, ".")
	for _, key := range keys[:len(keys)-1] {
		next, ok := obj[key].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[key] = next
		}
		obj = next
	}
	obj[keys[len(keys)-1]] = v
}

// listIndex is the index a field of the API's errors may end in
// ("sink.brokers[0]").
var listIndex = regexp.MustCompile(`\[\d+\]`)

// errorInput is the name of the form's input an error of the API is
// about, "" when none is: a sink field's error names the sink field
// ("sink.sasl.password"), or a part of one ("sink.brokers[1]"), or an
// object holding several ("sink.sasl", shown at its first field).
func errorInput(t sinkType, field string, formFields []string) string {
	if slices.Contains(formFields, field) {
		return field
	}
	path, ok := strings.CutPrefix(listIndex.ReplaceAllString(field, ""), "sink.")
	if !ok {
		return ""
	}
	for _, f := range t.Fields {
		if f.Path == path {
			return inputName(f.Path)
		}
	}
	for _, f := range t.Fields {
		if strings.HasPrefix(f.Path, path+".") {
			return inputName(f.Path)
		}
	}
	return ""
}

// sinkRow is one line of a stored sink's settings.
type sinkRow struct {
	Label, Value string
}

// sinkRows are a stored sink's settings as reads show them, credentials
// masked: the form's fields with their labels, then anything else the
// sink holds (a webhook's headers) as JSON.
func sinkRows(typeName string, view map[string]any) []sinkRow {
	t, _ := sinkTypeNamed(typeName)
	rows := []sinkRow{{Label: "Type", Value: typeName}}
	if known, ok := sinkTypeNamed(typeName); ok {
		rows[0].Value = known.Label
	}
	for _, f := range t.Fields {
		if f.Local {
			continue
		}
		v := lookup(view, f.Path)
		if v == nil {
			continue
		}
		text := shownValue(v)
		if i := slices.IndexFunc(f.Choices, func(c choice) bool { return c.Value == text }); i >= 0 {
			text = f.Choices[i].Label
		}
		if f.Kind == fieldCheck {
			text = "no"
			if b, _ := v.(bool); b {
				text = "yes"
			}
		}
		rows = append(rows, sinkRow{Label: f.Label, Value: text})
	}
	for _, key := range slices.Sorted(maps.Keys(view)) {
		if key == "type" || t.governs(key) {
			continue
		}
		rows = append(rows, sinkRow{Label: key, Value: shownValue(view[key])})
	}
	return rows
}

// shownValue is a value of a sink object as one line of text.
func shownValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		parts := make([]string, 0, len(v))
		for _, item := range v {
			parts = append(parts, shownValue(item))
		}
		return strings.Join(parts, ", ")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
