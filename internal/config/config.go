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

// SCRAMMechanism is the SASL/SCRAM mechanism used to authenticate to Kafka.
type SCRAMMechanism string

// The mechanisms STREAMING_HUB_KAFKA_SCRAM_MECHANISM accepts; SCRAMNone
// disables SASL.
const (
	SCRAMNone   SCRAMMechanism = ""
	SCRAMSHA256 SCRAMMechanism = "SCRAM-SHA-256"
	SCRAMSHA512 SCRAMMechanism = "SCRAM-SHA-512"
)

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
	MetricsEnabled bool
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
	TLSEnabled      bool
	SCRAMMechanism  SCRAMMechanism
	SCRAMUsername   string
	SCRAMPassword   string

	// OperationalTopic is where every tenant's operational events are
	// also produced; empty is off (docs/operational-events.md).
	OperationalTopic string
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

// KEKConfig carries where the key-encryption key is found. Reading the
// referenced variable is the crypto layer's job, not this package's.
type KEKConfig struct {
	Source KEKSource
	Ref    string // name of the environment variable holding the KEK
	DevKEK string
}
