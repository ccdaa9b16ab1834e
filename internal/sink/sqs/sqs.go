// Package sqs is the Amazon SQS sink (docs/concepts.md, Sinks): one SendMessage per attempt
// to a queue the tenant chose, with the subscription's own access key.
//
// A Type owns one http.Transport that every SQS sink shares, and caches one
// SDK client per credential set, so subscriptions that share a key share a
// client and Open is cheap enough to call per attempt. Requests go to the
// regional SQS endpoint, or to the configured endpoint override, always
// through a dialer that applies the outbound address policy
// (STREAMING_HUB_ALLOW_PRIVATE_SINKS), like webhooks.
package sqs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	sqsapi "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/awsclient"
)

// Name is the sink.type of SQS subscriptions.
const Name = "sqs"

const (
	// MaxURLLength bounds queue_url and endpoint; real ones are far shorter.
	MaxURLLength = awsclient.MaxEndpointLength
	// maxQueueNameLength is SQS's own limit, ".fifo" included.
	maxQueueNameLength = 80
	// clientCacheSize bounds the cached SDK clients. Each credential set a
	// subscription has ever used gets one; rotated keys age out of the cache
	// instead of accumulating for the life of the process.
	clientCacheSize = 1024
)

// Options are what every SQS sink of one hub shares.
type Options struct {
	// AllowPrivate lets requests reach loopback, private and reserved
	// addresses (STREAMING_HUB_ALLOW_PRIVATE_SINKS).
	AllowPrivate bool
	// Resolver answers host lookups at dial time; nil means the system's.
	Resolver netguard.Resolver
}

// Type is the SQS sink type. It is safe for concurrent use.
type Type struct {
	http    *awsclient.Clients
	clients *awsclient.ClientCache[*sqsapi.Client]
}

var _ sink.Type = (*Type)(nil)

// NewType builds the SQS sink type, its shared HTTP clients and SDK client
// cache. Requests to SQS's own regional endpoints pass the address policy
// too, and never a proxy.
func NewType(opts Options) *Type {
	return &Type{
		http:    awsclient.NewClients(awsclient.Options{AllowPrivate: opts.AllowPrivate, Resolver: opts.Resolver}),
		clients: awsclient.NewClientCache[*sqsapi.Client](clientCacheSize),
	}
}

// Name returns "sqs".
func (t *Type) Name() string { return Name }

// CloseIdleConnections closes the kept-alive connections of every sink of
// this type; call it at shutdown.
func (t *Type) CloseIdleConnections() { t.http.CloseIdleConnections() }

// publicConfig is the stored, shown configuration of an SQS sink.
type publicConfig struct {
	QueueURL string `json:"queue_url"`
	Region   string `json:"region"`
	Endpoint string `json:"endpoint,omitempty"`
}

// credentialConfig is the part stored encrypted and shown masked.
type credentialConfig = awsclient.Credentials

// Parse validates {"type":"sqs","queue_url","region","access_key_id",
// "secret_access_key","endpoint"?} and splits it: queue_url, region and
// endpoint are public, the two keys are credentials. The destination is
// the queue URL as given.
func (t *Type) Parse(raw json.RawMessage) (sink.Config, error) {
	fields, err := sink.DecodeObject(raw, Name, "access_key_id", "endpoint", "queue_url", "region", "secret_access_key")
	if err != nil {
		return sink.Config{}, err
	}
	var pub publicConfig
	var cred credentialConfig
	// Checked in the order DecodeObject reports unknown fields, sorted, so
	// one bad object always names the same field.
	steps := []struct {
		field    string
		required bool
		into     *string
		check    func(string) error
	}{
		{"access_key_id", true, &cred.AccessKeyID, awsclient.CheckKey},
		{"endpoint", false, &pub.Endpoint, t.http.CheckEndpoint},
		{"queue_url", true, &pub.QueueURL, checkQueueURL},
		{"region", true, &pub.Region, awsclient.CheckRegion},
		{"secret_access_key", true, &cred.SecretAccessKey, awsclient.CheckKey},
	}
	for _, step := range steps {
		value, err := stringField(fields, step.field, step.required)
		if err == nil && value != "" {
			err = step.check(value)
		}
		if err != nil {
			return sink.Config{}, &sink.FieldError{Field: "sink." + step.field, Message: err.Error()}
		}
		*step.into = value
	}

	public, err := marshalCompact(pub)
	if err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink", Message: "cannot be stored"}
	}
	secret, err := marshalCompact(cred)
	if err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink", Message: "cannot be stored"}
	}
	return sink.Config{Public: public, Credentials: secret, Destination: pub.QueueURL}, nil
}

// stringField reads one string field; absent, null and "" are all missing.
// Its errors never quote the value, which may be a secret.
func stringField(fields map[string]json.RawMessage, name string, required bool) (string, error) {
	raw, present := fields[name]
	if !present || string(raw) == "null" {
		if required {
			return "", errors.New("is required")
		}
		return "", nil
	}
	var value string
	if err := json.Unmarshal(raw, &value); err != nil {
		return "", errors.New("must be a string")
	}
	if value == "" && required {
		return "", errors.New("is required")
	}
	return value, nil
}

// checkQueueURL accepts an http(s) URL whose last path segment is a queue
// name. The SDK sends requests to the endpoint, not to this URL's host, so
// the host is not judged here; the URL only identifies the queue.
func checkQueueURL(raw string) error {
	// The host is never dialled (requests go to the endpoint), so no
	// address policy applies to it.
	if _, err := netguard.CheckTarget(raw, netguard.TargetRules{MaxLength: MaxURLLength, BaseOnly: true, AllowPrivate: true}); err != nil {
		return err
	}
	return checkQueueName(queueName(raw))
}

// checkQueueName applies SQS's naming rule: 1–80 letters, digits, hyphens
// and underscores, with ".fifo" ending the name of a FIFO queue.
func checkQueueName(name string) error {
	if name == "" {
		return errors.New("must end with the queue name, as in https://sqs.us-east-1.amazonaws.com/123456789012/orders")
	}
	if len(name) > maxQueueNameLength {
		return fmt.Errorf("queue name must be at most %d characters", maxQueueNameLength)
	}
	base := strings.TrimSuffix(name, fifoSuffix)
	if base == "" {
		return errors.New("queue name must not be only .fifo")
	}
	for i := range len(base) {
		c := base[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return errors.New("queue name may contain only letters, digits, hyphens and underscores (and end in .fifo)")
		}
	}
	return nil
}

// fifoSuffix ends the name of every FIFO queue.
const fifoSuffix = ".fifo"

// queueName is the last path segment of a queue URL.
func queueName(queueURL string) string {
	u, err := url.Parse(queueURL)
	if err != nil {
		return ""
	}
	path := u.Path
	return path[strings.LastIndexByte(path, '/')+1:]
}

// isFIFO reports whether a queue URL names a FIFO queue.
func isFIFO(queueURL string) bool { return strings.HasSuffix(queueName(queueURL), fifoSuffix) }

// marshalCompact keeps & < > as typed, so a stored URL reads back the way
// the tenant wrote it.
func marshalCompact(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Open builds the sink of one subscription from its stored configuration
// with decrypted credentials. The SDK client comes from the Type's cache,
// so Open is cheap; signingSecrets are a webhook matter and ignored.
func (t *Type) Open(cfg sink.Config, _ []string) (sink.Sink, error) {
	var pub publicConfig
	if err := json.Unmarshal(cfg.Public, &pub); err != nil {
		return nil, errors.New("sqs sink: stored configuration is not a JSON object")
	}
	var cred credentialConfig
	if err := json.Unmarshal(cfg.Credentials, &cred); err != nil {
		// The decoder's message could quote part of the secret.
		return nil, errors.New("sqs sink: stored credentials are not a JSON object")
	}
	if err := checkQueueURL(pub.QueueURL); err != nil {
		return nil, fmt.Errorf("sqs sink: stored queue_url: %w", err)
	}
	if pub.Region == "" {
		return nil, errors.New("sqs sink: stored region is empty")
	}
	if err := awsclient.CheckRegion(pub.Region); err != nil {
		return nil, fmt.Errorf("sqs sink: stored region: %w", err)
	}
	if pub.Endpoint != "" {
		if err := t.http.CheckEndpoint(pub.Endpoint); err != nil {
			return nil, fmt.Errorf("sqs sink: stored endpoint: %w", err)
		}
	}
	if cred.AccessKeyID == "" || cred.SecretAccessKey == "" {
		return nil, errors.New("sqs sink: stored credentials lack access_key_id or secret_access_key")
	}
	client := t.clients.Get(awsclient.KeyOf(pub.Region, pub.Endpoint, "", cred), func() *sqsapi.Client {
		return sqsapi.NewFromConfig(t.http.Config(pub.Region, pub.Endpoint, cred))
	})
	return &queueSink{
		client:   client,
		queueURL: pub.QueueURL,
		fifo:     isFIFO(pub.QueueURL),
		creds:    cred,
	}, nil
}
