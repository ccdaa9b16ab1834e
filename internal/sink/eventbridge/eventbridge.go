// Package eventbridge is the AWS EventBridge sink (docs/concepts.md, Sinks): one PutEvents
// entry per attempt, whose Detail is a JSON CloudEvent envelope of the
// event, signed with the subscription's own credentials.
//
// A Type owns the HTTP transports every subscription's sink shares, so
// deliveries to one region's endpoint reuse kept-alive connections however
// many subscriptions point at it; Open only wraps them in an SDK client.
package eventbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"

	awseventbridge "github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/awsclient"
)

// Name is the sink.type of EventBridge subscriptions.
const Name = "eventbridge"

const (
	// MaxEndpointLength bounds a stored endpoint override.
	MaxEndpointLength = awsclient.MaxEndpointLength
	// MaxEventBusLength is EventBridge's own limit on a bus name or ARN.
	MaxEventBusLength = 1600
	// MaxDetailTypeLength bounds a configured detail_type; EventBridge
	// counts it against the entry size, so a long one only wastes room.
	MaxDetailTypeLength = 256
	// maxAccessKeyIDLength is the AccessKeyId limit of the AWS APIs.
	maxAccessKeyIDLength = 128
)

var (
	// busNamePattern is EventBridge's pattern for a bus name (partner
	// buses contain slashes).
	busNamePattern = regexp.MustCompile(`^[/.\-_A-Za-z0-9]{1,256}$`)
	// busARNPattern is an event bus ARN; its region is captured so it can
	// be held against the configured one.
	busARNPattern = regexp.MustCompile(`^arn:aws[\w-]*:events:([a-z0-9-]+):[0-9]{12}:event-bus/([/.\-_A-Za-z0-9]+)$`)
	// accessKeyIDPattern is the AccessKeyId pattern of the AWS APIs.
	accessKeyIDPattern = regexp.MustCompile(`^\w+$`)
)

// Options are what every EventBridge sink of one hub shares.
type Options struct {
	// AllowPrivate lets endpoint overrides reach loopback, private and
	// reserved addresses (STREAMING_HUB_ALLOW_PRIVATE_SINKS).
	AllowPrivate bool
	// Resolver answers host lookups of endpoint overrides at dial time;
	// nil means the system's.
	Resolver netguard.Resolver
	// Dial connects to one already-checked address of an endpoint
	// override; nil means a net.Dialer.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Type is the EventBridge sink type. It is safe for concurrent use.
type Type struct {
	allowPrivate bool
	// http reaches the SDK's own regional endpoints as the SDK's default
	// does (the host is derived from a validated region, and a VPC
	// interface endpoint legitimately resolves it to a private address),
	// and tenant-chosen endpoints through the address policy.
	http *awsclient.Clients
}

var _ sink.Type = (*Type)(nil)

// NewType builds the EventBridge sink type and its shared transports.
func NewType(opts Options) *Type {
	return &Type{
		allowPrivate: opts.AllowPrivate,
		http:         awsclient.NewClients(awsclient.Options{AllowPrivate: opts.AllowPrivate, Resolver: opts.Resolver, Dial: opts.Dial}),
	}
}

// Name returns "eventbridge".
func (t *Type) Name() string { return Name }

// CloseIdleConnections closes the kept-alive connections of every sink of
// this type; call it at shutdown.
func (t *Type) CloseIdleConnections() { t.http.CloseIdleConnections() }

// publicConfig is the stored, shown configuration of an EventBridge sink.
type publicConfig struct {
	EventBus   string `json:"event_bus"`
	Region     string `json:"region"`
	Endpoint   string `json:"endpoint,omitempty"`
	DetailType string `json:"detail_type,omitempty"`
}

// credentialConfig is the part of the configuration encrypted at rest and
// never shown.
type credentialConfig = awsclient.Credentials

// Parse validates {"type":"eventbridge","event_bus","region",
// "access_key_id","secret_access_key","endpoint"?,"detail_type"?}. The keys
// go to Credentials only. Credentials are required: without them the SDK
// would fall back to the hub's own AWS identity, and a tenant could then
// publish to any bus the hub may reach.
func (t *Type) Parse(raw json.RawMessage) (sink.Config, error) {
	fields, err := sink.DecodeObject(raw, Name,
		"access_key_id", "detail_type", "endpoint", "event_bus", "region", "secret_access_key")
	if err != nil {
		return sink.Config{}, err
	}
	str := func(name string, required bool) (string, error) {
		value, present := fields[name]
		if !present {
			if required {
				return "", &sink.FieldError{Field: "sink." + name, Message: "is required"}
			}
			return "", nil
		}
		var s string
		if err := json.Unmarshal(value, &s); err != nil {
			return "", &sink.FieldError{Field: "sink." + name, Message: "must be a string"}
		}
		if s == "" && required {
			return "", &sink.FieldError{Field: "sink." + name, Message: "is required"}
		}
		return s, nil
	}

	var pub publicConfig
	var creds credentialConfig
	for _, f := range []struct {
		name     string
		required bool
		into     *string
	}{
		{"access_key_id", true, &creds.AccessKeyID},
		{"detail_type", false, &pub.DetailType},
		{"endpoint", false, &pub.Endpoint},
		{"event_bus", true, &pub.EventBus},
		{"region", true, &pub.Region},
		{"secret_access_key", true, &creds.SecretAccessKey},
	} {
		if *f.into, err = str(f.name, f.required); err != nil {
			return sink.Config{}, err
		}
	}
	if err := checkConfig(pub, t.allowPrivate); err != nil {
		return sink.Config{}, err
	}
	if err := checkCredentials(creds); err != nil {
		return sink.Config{}, err
	}

	public, err := json.Marshal(pub)
	if err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink", Message: "cannot be stored"}
	}
	secret, err := json.Marshal(creds)
	if err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink", Message: "cannot be stored"}
	}
	return sink.Config{Public: public, Credentials: secret, Destination: Destination(pub.Region, pub.EventBus)}, nil
}

// Destination is the circuit-breaker key of a bus (docs/concepts.md, Circuit breaker): region and
// bus as configured, never anything from the credentials.
func Destination(region, eventBus string) string { return region + "/" + eventBus }

// checkConfig validates the public fields. A literal IP address in an
// endpoint must pass the address policy unless private sinks are allowed,
// so an obviously unreachable endpoint is refused when it is configured;
// hostnames are judged at dial time.
func checkConfig(c publicConfig, allowPrivate bool) error {
	if err := awsclient.CheckRegion(c.Region); err != nil {
		return &sink.FieldError{Field: "sink.region", Message: err.Error()}
	}
	if err := checkEventBus(c.EventBus, c.Region); err != nil {
		return &sink.FieldError{Field: "sink.event_bus", Message: err.Error()}
	}
	if len(c.DetailType) > MaxDetailTypeLength {
		return &sink.FieldError{Field: "sink.detail_type", Message: fmt.Sprintf("must be at most %d characters", MaxDetailTypeLength)}
	}
	if strings.ContainsFunc(c.DetailType, isControl) {
		return &sink.FieldError{Field: "sink.detail_type", Message: "must not contain control characters"}
	}
	if c.Endpoint != "" {
		if err := awsclient.CheckEndpoint(c.Endpoint, allowPrivate); err != nil {
			return &sink.FieldError{Field: "sink.endpoint", Message: err.Error()}
		}
	}
	return nil
}

// checkEventBus accepts a bus name or the ARN of a bus in region: PutEvents
// signed for one region cannot reach a bus of another.
func checkEventBus(bus, region string) error {
	if len(bus) > MaxEventBusLength {
		return fmt.Errorf("must be at most %d characters", MaxEventBusLength)
	}
	if strings.HasPrefix(bus, "arn:") {
		m := busARNPattern.FindStringSubmatch(bus)
		if m == nil {
			return errors.New("must be an event bus name or an arn:aws:events:<region>:<account>:event-bus/<name> ARN")
		}
		if m[1] != region {
			return fmt.Errorf("ARN is in region %s, not the sink's region %s", m[1], region)
		}
		return nil
	}
	if !busNamePattern.MatchString(bus) {
		return errors.New("must be 1-256 characters of letters, digits and . - _ /")
	}
	return nil
}

// checkCredentials validates the keys without ever quoting them: the
// message of a FieldError is shown to whoever sent the request and logged.
func checkCredentials(c credentialConfig) error {
	if len(c.AccessKeyID) > maxAccessKeyIDLength || !accessKeyIDPattern.MatchString(c.AccessKeyID) {
		return &sink.FieldError{Field: "sink.access_key_id", Message: fmt.Sprintf("must be 1-%d letters, digits or underscores", maxAccessKeyIDLength)}
	}
	if c.SecretAccessKey == "" {
		return &sink.FieldError{Field: "sink.secret_access_key", Message: "is required"}
	}
	if err := awsclient.CheckKey(c.SecretAccessKey); err != nil {
		return &sink.FieldError{Field: "sink.secret_access_key", Message: err.Error()}
	}
	return nil
}

func isControl(r rune) bool { return r < ' ' || r == 0x7f }

// Open builds the sink of one subscription from its stored configuration
// and decrypted credentials; signingSecrets are not used. The SDK client
// makes exactly one HTTP request per call: the hub owns retries.
func (t *Type) Open(cfg sink.Config, _ []string) (sink.Sink, error) {
	var pub publicConfig
	if err := json.Unmarshal(cfg.Public, &pub); err != nil {
		return nil, errors.New("eventbridge sink: stored configuration is not a JSON object")
	}
	if err := checkConfig(pub, t.allowPrivate); err != nil {
		return nil, fmt.Errorf("eventbridge sink: stored configuration: %w", err)
	}
	var creds credentialConfig
	if err := json.Unmarshal(cfg.Credentials, &creds); err != nil {
		return nil, errors.New("eventbridge sink: credentials are not a JSON object")
	}
	if err := checkCredentials(creds); err != nil {
		return nil, fmt.Errorf("eventbridge sink: credentials: %w", err)
	}

	sdkConfig := t.http.Config(pub.Region, pub.Endpoint, creds)
	sdkConfig.AppID = "hubctl"
	return &busSink{
		client:     awseventbridge.NewFromConfig(sdkConfig),
		bus:        pub.EventBus,
		detailType: pub.DetailType,
		creds:      creds,
	}, nil
}
