package config

import (
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"
)

// EnvPrefix starts the name of every setting's environment variable.
const EnvPrefix = "STREAMING_HUB_"

// Setting describes one configuration value.
type Setting struct {
	Env         string // environment variable, e.g. STREAMING_HUB_DISPATCH_WORKERS
	Key         string // YAML key in the --config file, e.g. dispatch_workers
	Default     string // written as an operator would write it
	Description string
	Secret      bool // never shown or logged in clear

	codec codec
	// mask hides a secret for display; nil means hide it whole.
	mask func(string) string
}

// Allowed describes the values the setting accepts, e.g. "an integer from
// 1 to 1024".
func (s Setting) Allowed() string { return s.codec.allowed }

// Mask returns value as it may be displayed: unchanged for ordinary
// settings, "****" for secrets, with only the password hidden for the DSN.
// An empty secret stays empty so an operator can see it is unset.
func (s Setting) Mask(value string) string {
	switch {
	case !s.Secret || value == "":
		return value
	case s.mask != nil:
		return s.mask(value)
	default:
		return masked
	}
}

// Settings returns every setting in display order. The slice is a copy.
func Settings() []Setting { return slices.Clone(registry) }

// lookupSetting finds a setting by its environment variable name.
func lookupSetting(env string) (Setting, bool) {
	i := slices.IndexFunc(registry, func(s Setting) bool { return s.Env == env })
	if i < 0 {
		return Setting{}, false
	}
	return registry[i], true
}

func setting(name, def, description string, c codec) Setting {
	return Setting{
		Env:         EnvPrefix + name,
		Key:         strings.ToLower(name),
		Default:     def,
		Description: description,
		codec:       c,
	}
}

func secret(s Setting) Setting {
	s.Secret = true
	return s
}

// partlySecret is a secret whose display keeps what mask leaves visible.
func partlySecret(mask func(string) string, s Setting) Setting {
	s = secret(s)
	s.mask = mask
	return s
}

// registry lists every setting, grouped as an operator reads
// them. Its order is the order of `config show` and of validation messages.
var registry = []Setting{
	setting("ENV", "production",
		"Deployment environment; production unless said otherwise, hubctl dev sets local.",
		oneOf(func(c *Config) *Environment { return &c.Environment },
			EnvironmentLocal, EnvironmentStaging, EnvironmentProduction)),
	setting("LOG_LEVEL", "info",
		"Lowest level of log records written.",
		logLevel(func(c *Config) *slog.Level { return &c.LogLevel })),
	setting("ROLE", "all",
		"Which part of the hub hubctl serve runs: ingest, delivery or both.",
		oneOf(func(c *Config) *Role { return &c.Role }, RoleAll, RoleIngest, RoleDelivery)),
	setting("HTTP_LISTEN_ADDR", ":8080",
		"Address of the HTTP listener (health, metrics, tenant and admin APIs).",
		listenAddress(func(c *Config) *string { return &c.HTTPListenAddr })),
	setting("HTTP_TLS_CERT_FILE", "",
		"PEM certificate (chain) to serve the listener over TLS, with HTTP_TLS_KEY_FILE; read again when it changes, so a renewed certificate is served without a restart.",
		readableFile(func(c *Config) *string { return &c.HTTPTLSCertFile })),
	setting("HTTP_TLS_KEY_FILE", "",
		"PEM private key of HTTP_TLS_CERT_FILE.",
		readableFile(func(c *Config) *string { return &c.HTTPTLSKeyFile })),
	setting("METRICS_ENABLED", "true",
		"Serve Prometheus metrics on /metrics.",
		boolean(func(c *Config) *bool { return &c.MetricsEnabled })),
	setting("METRICS_TENANT_LIMIT", "20",
		"Tenants that get their own label on the per-tenant backlog metrics, those with the largest backlog first; the rest are summed under tenant=\"other\".",
		intBetween(1, 1000, func(c *Config) *int { return &c.MetricsTenantLimit })),

	partlySecret(maskDSN, setting("POSTGRES_DSN", "",
		"PostgreSQL connection string, URL or key=value form.",
		text(func(c *Config) *string { return &c.Postgres.DSN }))),
	setting("POSTGRES_MAX_OPEN_CONNS", "25",
		"Most connections the process opens to PostgreSQL.",
		intBetween(1, 1000, func(c *Config) *int { return &c.Postgres.MaxOpenConns })),

	setting("KAFKA_BROKERS", "localhost:9092",
		"Kafka bootstrap brokers.",
		hostPortList(func(c *Config) *[]string { return &c.Kafka.Brokers })),
	setting("KAFKA_GROUP", "streaming-hub",
		"Kafka consumer group shared by every ingesting instance.",
		nonEmptyText(func(c *Config) *string { return &c.Kafka.Group })),
	setting("KAFKA_TOPICS", `^lerian\.streaming\..+`,
		"Topics to consume: every topic whose name matches this pattern.",
		pattern(false, func(c *Config) **regexp.Regexp { return &c.Kafka.Topics })),
	setting("KAFKA_TOPICS_EXCLUDE", `\.(commands|dlq)$`,
		"Topics matching this pattern are not consumed even when KAFKA_TOPICS matches.",
		pattern(true, func(c *Config) **regexp.Regexp { return &c.Kafka.TopicsExclude })),
	setting("KAFKA_METADATA_REFRESH", "30s",
		"How soon topics created after start are picked up.",
		durationAtLeast(time.Second, func(c *Config) *time.Duration { return &c.Kafka.MetadataRefresh })),
	setting("KAFKA_INSTANCE_ID", "",
		"Static group membership: a restart with the same id takes its partitions back without a rebalance. Unique per process; empty joins as a dynamic member.",
		kafkaInstanceID(func(c *Config) *string { return &c.Kafka.InstanceID })),
	setting("KAFKA_SESSION_TIMEOUT", "10s",
		"How long the group waits for a silent member before giving its partitions to others: bounds recovery after a crash.",
		durationBetween(time.Second, 30*time.Minute, func(c *Config) *time.Duration { return &c.Kafka.SessionTimeout })),
	setting("OPERATIONAL_TOPIC", "",
		"Kafka topic every tenant's operational events (hub.*) are also produced to, key = tenant; empty is off. Must be a topic the hub does not consume.",
		kafkaTopic(func(c *Config) *string { return &c.Kafka.OperationalTopic })),
	setting("KAFKA_TLS_ENABLED", "false",
		"Connect to the brokers over TLS, verified against the system's trusted CAs (or KAFKA_TLS_CA_FILE); any KAFKA_TLS_*_FILE implies it.",
		boolean(func(c *Config) *bool { return &c.Kafka.TLSEnabled })),
	setting("KAFKA_TLS_CA_FILE", "",
		"PEM file of the authority the brokers' certificates must chain to, instead of the system's; read again when it changes.",
		readableFile(func(c *Config) *string { return &c.Kafka.TLSCAFile })),
	setting("KAFKA_TLS_CERT_FILE", "",
		"PEM client certificate for brokers that require one (with KAFKA_TLS_KEY_FILE); read again when it changes.",
		readableFile(func(c *Config) *string { return &c.Kafka.TLSCertFile })),
	setting("KAFKA_TLS_KEY_FILE", "",
		"PEM private key of KAFKA_TLS_CERT_FILE.",
		readableFile(func(c *Config) *string { return &c.Kafka.TLSKeyFile })),
	setting("KAFKA_SASL_MECHANISM", "",
		"SASL mechanism; empty disables SASL.",
		oneOf(func(c *Config) *SASLMechanism { return &c.Kafka.SASLMechanism },
			SASLNone, SASLPlain, SASLScramSHA256, SASLScramSHA512, SASLOAuthBearer, SASLAWSMSKIAM)),
	setting("KAFKA_SASL_USERNAME", "",
		"SASL user of PLAIN and SCRAM.",
		text(func(c *Config) *string { return &c.Kafka.SASLUsername })),
	secret(setting("KAFKA_SASL_PASSWORD", "",
		"SASL password of PLAIN and SCRAM.",
		text(func(c *Config) *string { return &c.Kafka.SASLPassword }))),
	setting("KAFKA_OAUTH_TOKEN_URL", "",
		"OAUTHBEARER: the identity provider's token endpoint (client-credentials flow).",
		httpURL(func(c *Config) *string { return &c.Kafka.OAuth.TokenURL })),
	setting("KAFKA_OAUTH_CLIENT_ID", "",
		"OAUTHBEARER: the client id.",
		text(func(c *Config) *string { return &c.Kafka.OAuth.ClientID })),
	secret(setting("KAFKA_OAUTH_CLIENT_SECRET", "",
		"OAUTHBEARER: the client secret.",
		text(func(c *Config) *string { return &c.Kafka.OAuth.ClientSecret }))),
	setting("KAFKA_OAUTH_SCOPE", "",
		"OAUTHBEARER: scopes to ask for, space-separated; empty asks for none.",
		text(func(c *Config) *string { return &c.Kafka.OAuth.Scope })),
	setting("KAFKA_AWS_REGION", "",
		"AWS_MSK_IAM: the region of the credential chain, and of the signature where the broker's host name does not say (credentials: the standard AWS chain).",
		text(func(c *Config) *string { return &c.Kafka.AWSRegion })),
	setting("KAFKA_SCRAM_MECHANISM", "",
		"Deprecated: use KAFKA_SASL_MECHANISM. Still works when that is empty.",
		oneOf(func(c *Config) *SASLMechanism { return &c.scram.Mechanism },
			SASLNone, SASLScramSHA256, SASLScramSHA512)),
	setting("KAFKA_SCRAM_USERNAME", "",
		"Deprecated: use KAFKA_SASL_USERNAME.",
		text(func(c *Config) *string { return &c.scram.Username })),
	secret(setting("KAFKA_SCRAM_PASSWORD", "",
		"Deprecated: use KAFKA_SASL_PASSWORD.",
		text(func(c *Config) *string { return &c.scram.Password }))),

	setting("TYPE_PREFIX", "studio.lerian.",
		"Prefix every accepted CloudEvents type starts with.",
		text(func(c *Config) *string { return &c.Ingest.TypePrefix })),
	setting("MAX_EVENT_BYTES", "1048576",
		"Largest record value accepted; larger ones are quarantined.",
		intBetween(1, 100<<20, func(c *Config) *int { return &c.Ingest.MaxEventBytes })),
	setting("MAX_HEADER_COUNT", "64",
		"Most headers a record may carry; more are quarantined as headers_too_large.",
		intBetween(16, 10_000, func(c *Config) *int { return &c.Ingest.MaxHeaderCount })),
	setting("MAX_HEADER_BYTES", "65536",
		"Most bytes of header names and values a record may carry; more are quarantined as headers_too_large.",
		intBetween(1024, 16<<20, func(c *Config) *int { return &c.Ingest.MaxHeaderBytes })),
	setting("MAX_ATTRIBUTE_BYTES", "4096",
		"Longest value of one CloudEvents attribute (ce- header or content-type); longer ones are quarantined as attribute_too_large.",
		intBetween(256, 1<<20, func(c *Config) *int { return &c.Ingest.MaxAttributeBytes })),
	setting("ROSTER_REFRESH", "5s",
		"How often the tenant roster is reloaded as a fallback; changes apply at once by database notification.",
		durationAtLeast(100*time.Millisecond, func(c *Config) *time.Duration { return &c.Ingest.RosterRefresh })),
	setting("FILTER_EVAL_TIMEOUT", "5ms",
		"Wall-clock limit of one content filter evaluation; one that runs longer fails (reason timeout) and its event becomes a filter_error dead letter.",
		durationAtLeast(100*time.Microsecond, func(c *Config) *time.Duration { return &c.Ingest.FilterEvalTimeout })),
	setting("FILTER_TENANT_BUDGET", "20ms",
		"Time one tenant's content filters may take per second of ingest in one process (bursting to as much); past it, its filters are not evaluated and their events become filter_error dead letters (budget_exceeded) until the budget refills.",
		durationAtLeast(time.Millisecond, func(c *Config) *time.Duration { return &c.Ingest.FilterTenantBudget })),

	setting("DISPATCH_WORKERS", "8",
		"Delivery workers per process: they take claimed jobs in turns by tenant and start their attempts, which run up to DISPATCH_MAX_IN_FLIGHT at once.",
		intBetween(1, 1024, func(c *Config) *int { return &c.Dispatch.Workers })),
	setting("DISPATCH_MAX_IN_FLIGHT", "256",
		"Most delivery attempts one process runs at once: attempts wait on the network, so many run beside each other at little cost.",
		intBetween(1, 10_000, func(c *Config) *int { return &c.Dispatch.MaxInFlight })),
	setting("DISPATCH_TENANT_MAX_IN_FLIGHT", "64",
		"Most delivery attempts of one tenant one process runs at once, so that no tenant takes every attempt; at most DISPATCH_MAX_IN_FLIGHT.",
		intBetween(1, 10_000, func(c *Config) *int { return &c.Dispatch.TenantMaxInFlight })),
	setting("DISPATCH_DESTINATION_MAX_IN_FLIGHT", "16",
		"Most delivery attempts to one destination of a tenant (its circuit breaker's key) one process runs at once, so that a slow or hanging destination only slows itself; at most DISPATCH_TENANT_MAX_IN_FLIGHT.",
		intBetween(1, 10_000, func(c *Config) *int { return &c.Dispatch.DestinationMaxInFlight })),
	setting("DISPATCH_CLAIM_BATCH", "64",
		"Delivery jobs claimed per database round trip.",
		intBetween(1, 1000, func(c *Config) *int { return &c.Dispatch.ClaimBatch })),
	setting("DISPATCH_IDLE_INTERVAL", "250ms",
		"How often idle workers look for work when no notification arrives.",
		durationAtLeast(10*time.Millisecond, func(c *Config) *time.Duration { return &c.Dispatch.IdleInterval })),
	setting("POISON_THRESHOLD", "5",
		"Lease recoveries after which a job is dead-lettered as poison.",
		intAtLeast(1, func(c *Config) *int { return &c.Dispatch.PoisonThreshold })),

	setting("BREAKER_FAILURES", "5",
		"Consecutive failures that open a destination's circuit breaker.",
		intAtLeast(1, func(c *Config) *int { return &c.Breaker.Failures })),
	setting("BREAKER_COOLDOWN", "30s",
		"How long an open breaker sheds jobs before letting a probe through.",
		positiveDuration(func(c *Config) *time.Duration { return &c.Breaker.Cooldown })),

	setting("ALLOW_PRIVATE_SINKS", "false",
		"Allow deliveries to loopback, private and other non-public addresses.",
		boolean(func(c *Config) *bool { return &c.AllowPrivateSinks })),

	setting("AUTODISABLE_ENABLED", "true",
		"Disable subscriptions whose deliveries keep failing.",
		boolean(func(c *Config) *bool { return &c.AutoDisable.Enabled })),
	setting("AUTODISABLE_FAILURE_WINDOW", "120h",
		"How long a failure span must last before auto-disable.",
		positiveDuration(func(c *Config) *time.Duration { return &c.AutoDisable.FailureWindow })),
	setting("AUTODISABLE_FAILURE_SPREAD", "12h",
		"How far apart the first and last failures of the span must be.",
		durationAtLeast(0, func(c *Config) *time.Duration { return &c.AutoDisable.FailureSpread })),

	setting("ROTATION_OVERLAP", "24h",
		"How long a rotated signing secret stays valid beside the new one.",
		durationAtLeast(0, func(c *Config) *time.Duration { return &c.RotationOverlap })),
	setting("MAX_SUBSCRIPTIONS_PER_TENANT", "1000",
		"Most live subscriptions one tenant may have; creating one more answers 409 subscription_limit_reached. Each runs its filter on every event of the tenant at ingest, so this bounds the filter work one tenant puts on a batch. There is no unlimited value.",
		intBetween(1, 100_000, func(c *Config) *int { return &c.MaxSubscriptionsPerTenant })),

	setting("PULL_RATE", "100",
		"Pull requests allowed per second per tenant (token bucket rate).",
		positiveFloat(func(c *Config) *float64 { return &c.Pull.Rate })),
	setting("PULL_BURST", "200",
		"Pull requests a tenant may make in a burst (token bucket size).",
		intAtLeast(1, func(c *Config) *int { return &c.Pull.Burst })),

	setting("RETENTION_EVENTS", "168h",
		"How long inbox events, their ids and pull entries are kept (never shorter than the longest retry curve).",
		retention(func(c *Config) *time.Duration { return &c.Retention.Events })),
	setting("RETENTION_DELIVERIES", "168h",
		"How long finished delivery jobs (dead letters included) and attempts are kept (never shorter than the longest retry curve).",
		retention(func(c *Config) *time.Duration { return &c.Retention.Deliveries })),
	setting("RETENTION_QUARANTINE", "720h",
		"How long quarantined records are kept.",
		positiveDuration(func(c *Config) *time.Duration { return &c.Retention.Quarantine })),
	setting("RETENTION_INTERVAL", "15m",
		"How often hubctl serve runs retention (one instance at a time) and refreshes the storage metrics.",
		durationAtLeast(time.Second, func(c *Config) *time.Duration { return &c.Retention.Interval })),

	setting("KEK_SOURCE", "env",
		"Where the key-encryption key comes from.",
		oneOf(func(c *Config) *KEKSource { return &c.KEK.Source }, KEKSourceEnv)),
	setting("KEK_REF", "",
		"Name of the environment variable holding the key-encryption key.",
		envVarReference(func(c *Config) *string { return &c.KEK.Ref })),
	secret(setting("DEV_KEK", "",
		"Key-encryption key for local development only.",
		text(func(c *Config) *string { return &c.KEK.DevKEK }))),

	setting("PORTAL_ENABLED", "true",
		"Serve the web portal under /portal/ and issue its sign-in links.",
		boolean(func(c *Config) *bool { return &c.Portal.Enabled })),
	setting("PUBLIC_URL", "",
		"Base URL people reach this hub at, which portal sign-in links start with; empty: the listener's address.",
		publicURL(func(c *Config) *string { return &c.Portal.PublicURL })),
	setting("PORTAL_FRAME_ANCESTORS", "",
		"Origins allowed to embed the portal in a frame, comma-separated; empty: none.",
		originList(func(c *Config) *[]string { return &c.Portal.FrameAncestors })),

	setting("SHUTDOWN_TIMEOUT", "30s",
		"How long SIGTERM waits for in-flight work before exiting.",
		positiveDuration(func(c *Config) *time.Duration { return &c.ShutdownTimeout })),
	secret(setting("ADMIN_TOKEN", "",
		"Bearer token of the admin API (/admin).",
		optionalSecret(16, func(c *Config) *string { return &c.AdminToken }))),
}
