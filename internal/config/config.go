// Package config resolves hubctl's settings from flags, STREAMING_HUB_*
// environment variables, a YAML config file and built-in defaults, in that
// order of precedence, into one typed Config.
//
// The setting registry (Settings) is the single source of every name,
// default and allowed value: Load, `hubctl config show` and generated docs
// all read it, so they cannot drift apart.
package config

import (
	"log/slog"
	"net"
	"regexp"
	"time"
)

// Environment is the deployment environment the process runs in.
type Environment string

// The environments STREAMING_HUB_ENV accepts.
const (
	EnvironmentLocal      Environment = "local"
	EnvironmentStaging    Environment = "staging"
	EnvironmentProduction Environment = "production"
)

// Role selects which halves of the hub a `hubctl serve` process runs.
type Role string

// The roles STREAMING_HUB_ROLE accepts.
const (
	RoleAll      Role = "all"
	RoleIngest   Role = "ingest"
	RoleDelivery Role = "delivery"
)

// RunsIngest reports whether the role consumes from Kafka.
func (r Role) RunsIngest() bool { return r == RoleAll || r == RoleIngest }

// RunsDelivery reports whether the role runs the dispatch workers.
func (r Role) RunsDelivery() bool { return r == RoleAll || r == RoleDelivery }

// SASLMechanism is how the hub authenticates to Kafka.
type SASLMechanism string

// The mechanisms STREAMING_HUB_KAFKA_SASL_MECHANISM accepts; SASLNone
// disables SASL.
const (
	SASLNone        SASLMechanism = ""
	SASLPlain       SASLMechanism = "PLAIN"
	SASLScramSHA256 SASLMechanism = "SCRAM-SHA-256"
	SASLScramSHA512 SASLMechanism = "SCRAM-SHA-512"
	SASLOAuthBearer SASLMechanism = "OAUTHBEARER"
	SASLAWSMSKIAM   SASLMechanism = "AWS_MSK_IAM"
)

// UsesPassword reports whether the mechanism authenticates with
// STREAMING_HUB_KAFKA_SASL_USERNAME and _PASSWORD.
func (m SASLMechanism) UsesPassword() bool {
	return m == SASLPlain || m == SASLScramSHA256 || m == SASLScramSHA512
}

// KEKSource says where the key-encryption key comes from.
type KEKSource string

// KEKSourceEnv reads the KEK from the environment variable named by
// STREAMING_HUB_KEK_REF; it is the only source so far.
const KEKSourceEnv KEKSource = "env"

// Config is the effective configuration of one hubctl process.
type Config struct {
	Environment    Environment
	LogLevel       slog.Level
	Role           Role
	HTTPListenAddr string
	// HTTPTLSCertFile and HTTPTLSKeyFile serve the listener over TLS;
	// both or neither.
	HTTPTLSCertFile string
	HTTPTLSKeyFile  string
	MetricsEnabled  bool
	// MetricsTenantLimit bounds the tenant label of per-tenant metrics.
	MetricsTenantLimit int
	AllowPrivateSinks  bool
	RotationOverlap    time.Duration
	// MaxSubscriptionsPerTenant caps a tenant's live subscriptions, and
	// with them the filters one of its events runs at ingest.
	MaxSubscriptionsPerTenant int
	ShutdownTimeout           time.Duration
	AdminToken                string

	Postgres    PostgresConfig
	Kafka       KafkaConfig
	Ingest      IngestConfig
	Dispatch    DispatchConfig
	Breaker     BreakerConfig
	AutoDisable AutoDisableConfig
	Pull        PullConfig
	Retention   RetentionConfig
	KEK         KEKConfig
	Portal      PortalConfig

	// Deprecations are warnings about settings that still work but will
	// not always: the caller says each once.
	Deprecations []string
	scram        deprecatedSCRAM

	// resolved remembers, in registry order, the text and origin of every
	// setting as Load saw them, so Show can report them.
	resolved []resolvedValue
}

// PostgresConfig locates the database.
type PostgresConfig struct {
	DSN          string
	MaxOpenConns int
}

// KafkaConfig says which cluster, group and topics ingest consumes.
type KafkaConfig struct {
	Brokers         []string
	Group           string
	Topics          *regexp.Regexp
	TopicsExclude   *regexp.Regexp // nil when nothing is excluded
	MetadataRefresh time.Duration
	InstanceID      string // empty: a dynamic group member
	SessionTimeout  time.Duration
	// TLSEnabled is also true when any of the TLS files is set.
	TLSEnabled bool
	// TLSCertFile and TLSKeyFile are a client certificate; TLSCAFile the
	// authority the brokers' certificates are checked against instead of
	// the system's. Each is read again when it changes on disk.
	TLSCertFile   string
	TLSKeyFile    string
	TLSCAFile     string
	SASLMechanism SASLMechanism
	SASLUsername  string
	SASLPassword  string
	OAuth         KafkaOAuthConfig
	// AWSRegion is the region of AWS_MSK_IAM's credential chain, and of its
	// signature where the broker's host name does not say.
	AWSRegion string

	// OperationalTopic is where every tenant's operational events are
	// also produced; empty is off (docs/operational-events.md).
	OperationalTopic string
}

// KafkaOAuthConfig is OAUTHBEARER by the client-credentials flow.
type KafkaOAuthConfig struct {
	TokenURL     string
	ClientID     string
	ClientSecret string
	Scope        string
}

// deprecatedSCRAM holds the revision-1 STREAMING_HUB_KAFKA_SCRAM_* settings,
// which still work as the SASL settings they became.
type deprecatedSCRAM struct {
	Mechanism SASLMechanism
	Username  string
	Password  string
}

// WantsTopic reports whether ingest subscribes to the named topic: it must
// match Topics and must not match TopicsExclude.
func (k KafkaConfig) WantsTopic(topic string) bool {
	if k.Topics == nil || !k.Topics.MatchString(topic) {
		return false
	}
	return k.TopicsExclude == nil || !k.TopicsExclude.MatchString(topic)
}

// IngestConfig bounds what ingest accepts.
type IngestConfig struct {
	TypePrefix    string
	MaxEventBytes int
	// MaxHeaderCount, MaxHeaderBytes and MaxAttributeBytes bound a
	// record's headers (docs in internal/event).
	MaxHeaderCount    int
	MaxHeaderBytes    int
	MaxAttributeBytes int
	RosterRefresh     time.Duration
	// FilterEvalTimeout stops one content filter evaluation, and
	// FilterTenantBudget is the filter time one tenant may spend per
	// second (match.FilterLimits, match.TenantBudgets).
	FilterEvalTimeout  time.Duration
	FilterTenantBudget time.Duration
}

// DispatchConfig sizes the delivery worker pool.
type DispatchConfig struct {
	Workers int
	// MaxInFlight, TenantMaxInFlight and DestinationMaxInFlight cap the
	// attempts running at once: in all, per tenant and per (tenant,
	// destination).
	MaxInFlight            int
	TenantMaxInFlight      int
	DestinationMaxInFlight int
	ClaimBatch             int
	IdleInterval           time.Duration
	PoisonThreshold        int
}

// BreakerConfig tunes the per-destination circuit breaker.
type BreakerConfig struct {
	Failures int
	Cooldown time.Duration
}

// AutoDisableConfig tunes when a failing subscription is switched off.
type AutoDisableConfig struct {
	Enabled       bool
	FailureWindow time.Duration
	FailureSpread time.Duration
}

// PullConfig is the per-tenant token bucket of the pull endpoint.
type PullConfig struct {
	Rate  float64 // events per second
	Burst int
}

// RetentionConfig says how long stored rows are kept and how often serve
// prunes (docs/architecture.md, "Storage lifecycle").
type RetentionConfig struct {
	Events     time.Duration
	Deliveries time.Duration
	Quarantine time.Duration
	Interval   time.Duration
}

// PortalConfig is the web portal's (SPEC §10, docs/portal.md).
type PortalConfig struct {
	Enabled bool
	// PublicURL is the base of sign-in links; "" means the listener's
	// address (PortalBaseURL).
	PublicURL string
	// FrameAncestors are the origins allowed to embed the portal in a
	// frame; none may when empty.
	FrameAncestors []string
}

// PortalBaseURL is what portal sign-in links start with:
// STREAMING_HUB_PUBLIC_URL, or else the listener's address as this machine
// reaches it (an unspecified host is localhost).
func (c *Config) PortalBaseURL() string {
	if c.Portal.PublicURL != "" {
		return c.Portal.PublicURL
	}
	host, port, err := net.SplitHostPort(c.HTTPListenAddr)
	if err != nil {
		return "http://localhost"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// KEKConfig carries where the key-encryption key is found. Reading the
// referenced variable is the crypto layer's job, not this package's.
type KEKConfig struct {
	Source KEKSource
	Ref    string // name of the environment variable holding the KEK
	DevKEK string
}
