// Package s3 is the Amazon S3 sink (docs/concepts.md, Sinks): one PutObject
// per attempt, the event data as the object, at a key made of the tenant,
// the event's hour and its id, so a retry overwrites the same object.
//
// A Type shares the AWS plumbing of the SQS and EventBridge sinks
// (internal/sink/awsclient): one http.Transport every S3 sink shares, an
// SDK client cached per credential set, requests to the regional endpoint
// or to an endpoint override (an S3-compatible store), the latter through
// the outbound address policy (STREAMING_HUB_ALLOW_PRIVATE_SINKS).
package s3

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	s3api "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/hubctl/hubctl/internal/netguard"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/awsclient"
)

// Name is the sink.type of S3 subscriptions.
const Name = "s3"

const (
	// MaxPrefixBytes bounds prefix, leaving most of S3's 1,024-byte key
	// for the tenant, the hour and the event id.
	MaxPrefixBytes = 512
	// clientCacheSize bounds the cached SDK clients (awsclient.ClientCache).
	clientCacheSize = 1024
	// pathStyleVariant tells apart, in the client cache, the client that
	// addresses buckets by path.
	pathStyleVariant = "path-style"
)

// Options are what every S3 sink of one hub shares.
type Options struct {
	// AllowPrivate lets requests reach loopback, private and reserved
	// addresses (STREAMING_HUB_ALLOW_PRIVATE_SINKS).
	AllowPrivate bool
	// Resolver answers host lookups at dial time; nil means the system's.
	Resolver netguard.Resolver
}

// Type is the S3 sink type. It is safe for concurrent use.
type Type struct {
	http    *awsclient.Clients
	clients *awsclient.ClientCache[*s3api.Client]
}

var _ sink.Type = (*Type)(nil)

// NewType builds the S3 sink type, its shared HTTP clients and SDK client
// cache.
func NewType(opts Options) *Type {
	return &Type{
		http:    awsclient.NewClients(awsclient.Options{AllowPrivate: opts.AllowPrivate, Resolver: opts.Resolver}),
		clients: awsclient.NewClientCache[*s3api.Client](clientCacheSize),
	}
}

// Name returns "s3".
func (t *Type) Name() string { return Name }

// CloseIdleConnections closes the kept-alive connections of every sink of
// this type; call it at shutdown.
func (t *Type) CloseIdleConnections() { t.http.CloseIdleConnections() }

// publicConfig is the stored, shown configuration of an S3 sink.
type publicConfig struct {
	Bucket    string `json:"bucket"`
	Region    string `json:"region"`
	Prefix    string `json:"prefix,omitempty"`
	Endpoint  string `json:"endpoint,omitempty"`
	PathStyle bool   `json:"path_style,omitempty"`
}

// Parse validates {"type":"s3","bucket","region","access_key_id",
// "secret_access_key","prefix"?,"endpoint"?,"path_style"?} and splits it:
// the two keys are credentials, the rest public. The destination is the
// bucket, at its endpoint when it has one.
func (t *Type) Parse(raw json.RawMessage) (sink.Config, error) {
	fields, err := sink.DecodeObject(raw, Name, "access_key_id", "bucket", "endpoint", "path_style", "prefix", "region", "secret_access_key")
	if err != nil {
		return sink.Config{}, err
	}
	var pub publicConfig
	var cred awsclient.Credentials
	// Checked in the order DecodeObject reports unknown fields, sorted, so
	// one bad object always names the same field.
	steps := []struct {
		field    string
		required bool
		into     *string
		check    func(string) error
	}{
		{"access_key_id", true, &cred.AccessKeyID, awsclient.CheckKey},
		{"bucket", true, &pub.Bucket, checkBucket},
		{"endpoint", false, &pub.Endpoint, t.http.CheckEndpoint},
		{"prefix", false, &pub.Prefix, checkPrefix},
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
	if rawPathStyle, ok := fields["path_style"]; ok && string(rawPathStyle) != "null" {
		if err := json.Unmarshal(rawPathStyle, &pub.PathStyle); err != nil {
			return sink.Config{}, &sink.FieldError{Field: "sink.path_style", Message: "must be true or false"}
		}
	}
	public, err := json.Marshal(pub)
	if err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink", Message: "cannot be stored"}
	}
	secret, err := json.Marshal(cred)
	if err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink", Message: "cannot be stored"}
	}
	return sink.Config{Public: public, Credentials: secret, Destination: Destination(pub.Endpoint, pub.Bucket)}, nil
}

// Destination is the circuit-breaker key of an S3 sink (docs/concepts.md,
// Circuit breaker): s3://<bucket> on AWS, whose bucket names are global,
// and <endpoint>/<bucket> on an S3-compatible store.
func Destination(endpoint, bucket string) string {
	if endpoint == "" {
		return "s3://" + bucket
	}
	return strings.TrimSuffix(strings.ToLower(endpoint), "/") + "/" + bucket
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

// checkBucket applies S3's bucket naming rules: 3–63 lowercase letters,
// digits, dots and hyphens, starting and ending with a letter or digit,
// and not shaped like an IP address. The name becomes part of a host name
// in virtual-hosted requests, so nothing else could be addressed anyway.
func checkBucket(bucket string) error {
	if len(bucket) < 3 || len(bucket) > 63 {
		return errors.New("must be 3 to 63 characters")
	}
	for i := range len(bucket) {
		c := bucket[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '.' && c != '-' {
			return errors.New("may contain only lowercase letters, digits, dots and hyphens")
		}
	}
	first, last := bucket[0], bucket[len(bucket)-1]
	if first == '.' || first == '-' || last == '.' || last == '-' {
		return errors.New("must start and end with a letter or digit")
	}
	if strings.Contains(bucket, "..") {
		return errors.New("must not contain two dots in a row")
	}
	if _, err := netip.ParseAddr(bucket); err == nil {
		return errors.New("must not be shaped like an IP address")
	}
	return nil
}

// checkPrefix accepts what can start an object key: valid UTF-8 without
// control characters, within MaxPrefixBytes. It is used as given, so
// "events/" puts the tenants' folders under events/ and "events-" does not.
func checkPrefix(prefix string) error {
	switch {
	case len(prefix) > MaxPrefixBytes:
		return fmt.Errorf("must be at most %d bytes", MaxPrefixBytes)
	case !utf8.ValidString(prefix):
		return errors.New("must be valid UTF-8")
	case strings.ContainsFunc(prefix, unicode.IsControl):
		return errors.New("must not contain control characters")
	case strings.HasPrefix(prefix, "/"):
		return errors.New("must not start with /: object keys have no leading slash")
	}
	return nil
}

// Open builds the sink of one subscription from its stored configuration
// with decrypted credentials. The SDK client comes from the Type's cache,
// so Open is cheap; signingSecrets are a webhook matter and ignored.
func (t *Type) Open(cfg sink.Config, _ []string) (sink.Sink, error) {
	var pub publicConfig
	if err := json.Unmarshal(cfg.Public, &pub); err != nil {
		return nil, errors.New("s3 sink: stored configuration is not a JSON object")
	}
	var cred awsclient.Credentials
	if err := json.Unmarshal(cfg.Credentials, &cred); err != nil {
		// The decoder's message could quote part of the secret.
		return nil, errors.New("s3 sink: stored credentials are not a JSON object")
	}
	if err := checkBucket(pub.Bucket); err != nil {
		return nil, fmt.Errorf("s3 sink: stored bucket: %w", err)
	}
	if err := awsclient.CheckRegion(pub.Region); err != nil {
		return nil, fmt.Errorf("s3 sink: stored region: %w", err)
	}
	if err := checkPrefix(pub.Prefix); err != nil {
		return nil, fmt.Errorf("s3 sink: stored prefix: %w", err)
	}
	if pub.Endpoint != "" {
		if err := t.http.CheckEndpoint(pub.Endpoint); err != nil {
			return nil, fmt.Errorf("s3 sink: stored endpoint: %w", err)
		}
	}
	if cred.AccessKeyID == "" || cred.SecretAccessKey == "" {
		return nil, errors.New("s3 sink: stored credentials lack access_key_id or secret_access_key")
	}
	variant := ""
	if pub.PathStyle {
		variant = pathStyleVariant
	}
	client := t.clients.Get(awsclient.KeyOf(pub.Region, pub.Endpoint, variant, cred), func() *s3api.Client {
		return s3api.NewFromConfig(t.http.Config(pub.Region, pub.Endpoint, cred), func(o *s3api.Options) {
			o.UsePathStyle = pub.PathStyle
			// Checksums only where S3 requires them: the SDK's default
			// trailing checksums are refused by many S3-compatible stores,
			// and TLS already protects the bytes on the way.
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		})
	})
	return &bucketSink{client: client, bucket: pub.Bucket, prefix: pub.Prefix, creds: cred}, nil
}
