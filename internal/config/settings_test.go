package config

import (
	"log/slog"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDefaultsMatchTheDocumentedValues pins every default to the documented value
// (docs/configuration.md), through the typed Config a caller sees.
func TestDefaultsMatchTheDocumentedValues(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, LoadOptions{})

	re := func(r *regexp.Regexp) string {
		if r == nil {
			return "<nil>"
		}
		return r.String()
	}
	tests := []struct {
		env  string
		got  any
		want any
	}{
		{"STREAMING_HUB_ENV", cfg.Environment, EnvironmentProduction},
		{"STREAMING_HUB_LOG_LEVEL", cfg.LogLevel, slog.LevelInfo},
		{"STREAMING_HUB_ROLE", cfg.Role, RoleAll},
		{"STREAMING_HUB_HTTP_LISTEN_ADDR", cfg.HTTPListenAddr, ":8080"},
		{"STREAMING_HUB_HTTP_TLS_CERT_FILE", cfg.HTTPTLSCertFile, ""},
		{"STREAMING_HUB_HTTP_TLS_KEY_FILE", cfg.HTTPTLSKeyFile, ""},
		{"STREAMING_HUB_METRICS_ENABLED", cfg.MetricsEnabled, true},
		{"STREAMING_HUB_METRICS_TENANT_LIMIT", cfg.MetricsTenantLimit, 20},
		{"STREAMING_HUB_POSTGRES_DSN", cfg.Postgres.DSN, ""},
		{"STREAMING_HUB_POSTGRES_MAX_OPEN_CONNS", cfg.Postgres.MaxOpenConns, 25},
		{"STREAMING_HUB_KAFKA_BROKERS", cfg.Kafka.Brokers, []string{"localhost:9092"}},
		{"STREAMING_HUB_KAFKA_GROUP", cfg.Kafka.Group, "streaming-hub"},
		{"STREAMING_HUB_KAFKA_TOPICS", re(cfg.Kafka.Topics), `^lerian\.streaming\..+`},
		{"STREAMING_HUB_KAFKA_TOPICS_EXCLUDE", re(cfg.Kafka.TopicsExclude), `\.(commands|dlq)$`},
		{"STREAMING_HUB_KAFKA_METADATA_REFRESH", cfg.Kafka.MetadataRefresh, 30 * time.Second},
		{"STREAMING_HUB_KAFKA_INSTANCE_ID", cfg.Kafka.InstanceID, ""},
		{"STREAMING_HUB_KAFKA_SESSION_TIMEOUT", cfg.Kafka.SessionTimeout, 10 * time.Second},
		{"STREAMING_HUB_OPERATIONAL_TOPIC", cfg.Kafka.OperationalTopic, ""},
		{"STREAMING_HUB_KAFKA_TLS_ENABLED", cfg.Kafka.TLSEnabled, false},
		{"STREAMING_HUB_KAFKA_TLS_CA_FILE", cfg.Kafka.TLSCAFile, ""},
		{"STREAMING_HUB_KAFKA_TLS_CERT_FILE", cfg.Kafka.TLSCertFile, ""},
		{"STREAMING_HUB_KAFKA_TLS_KEY_FILE", cfg.Kafka.TLSKeyFile, ""},
		{"STREAMING_HUB_KAFKA_SASL_MECHANISM", cfg.Kafka.SASLMechanism, SASLNone},
		{"STREAMING_HUB_KAFKA_SASL_USERNAME", cfg.Kafka.SASLUsername, ""},
		{"STREAMING_HUB_KAFKA_SASL_PASSWORD", cfg.Kafka.SASLPassword, ""},
		{"STREAMING_HUB_KAFKA_OAUTH_TOKEN_URL", cfg.Kafka.OAuth.TokenURL, ""},
		{"STREAMING_HUB_KAFKA_OAUTH_CLIENT_ID", cfg.Kafka.OAuth.ClientID, ""},
		{"STREAMING_HUB_KAFKA_OAUTH_CLIENT_SECRET", cfg.Kafka.OAuth.ClientSecret, ""},
		{"STREAMING_HUB_KAFKA_OAUTH_SCOPE", cfg.Kafka.OAuth.Scope, ""},
		{"STREAMING_HUB_KAFKA_AWS_REGION", cfg.Kafka.AWSRegion, ""},
		{"STREAMING_HUB_KAFKA_SCRAM_MECHANISM", cfg.scram.Mechanism, SASLNone},
		{"STREAMING_HUB_KAFKA_SCRAM_USERNAME", cfg.scram.Username, ""},
		{"STREAMING_HUB_KAFKA_SCRAM_PASSWORD", cfg.scram.Password, ""},
		{"STREAMING_HUB_TYPE_PREFIX", cfg.Ingest.TypePrefix, "studio.lerian."},
		{"STREAMING_HUB_MAX_EVENT_BYTES", cfg.Ingest.MaxEventBytes, 1 << 20},
		{"STREAMING_HUB_MAX_HEADER_COUNT", cfg.Ingest.MaxHeaderCount, 64},
		{"STREAMING_HUB_MAX_HEADER_BYTES", cfg.Ingest.MaxHeaderBytes, 64 << 10},
		{"STREAMING_HUB_MAX_ATTRIBUTE_BYTES", cfg.Ingest.MaxAttributeBytes, 4 << 10},
		{"STREAMING_HUB_ROSTER_REFRESH", cfg.Ingest.RosterRefresh, 5 * time.Second},
		{"STREAMING_HUB_FILTER_EVAL_TIMEOUT", cfg.Ingest.FilterEvalTimeout, 5 * time.Millisecond},
		{"STREAMING_HUB_FILTER_TENANT_BUDGET", cfg.Ingest.FilterTenantBudget, 20 * time.Millisecond},
		{"STREAMING_HUB_MAX_SUBSCRIPTIONS_PER_TENANT", cfg.MaxSubscriptionsPerTenant, 1000},
		{"STREAMING_HUB_DISPATCH_WORKERS", cfg.Dispatch.Workers, 8},
		{"STREAMING_HUB_DISPATCH_MAX_IN_FLIGHT", cfg.Dispatch.MaxInFlight, 256},
		{"STREAMING_HUB_DISPATCH_TENANT_MAX_IN_FLIGHT", cfg.Dispatch.TenantMaxInFlight, 64},
		{"STREAMING_HUB_DISPATCH_DESTINATION_MAX_IN_FLIGHT", cfg.Dispatch.DestinationMaxInFlight, 16},
		{"STREAMING_HUB_DISPATCH_CLAIM_BATCH", cfg.Dispatch.ClaimBatch, 64},
		{"STREAMING_HUB_DISPATCH_IDLE_INTERVAL", cfg.Dispatch.IdleInterval, 250 * time.Millisecond},
		{"STREAMING_HUB_POISON_THRESHOLD", cfg.Dispatch.PoisonThreshold, 5},
		{"STREAMING_HUB_BREAKER_FAILURES", cfg.Breaker.Failures, 5},
		{"STREAMING_HUB_BREAKER_COOLDOWN", cfg.Breaker.Cooldown, 30 * time.Second},
		{"STREAMING_HUB_ALLOW_PRIVATE_SINKS", cfg.AllowPrivateSinks, false},
		{"STREAMING_HUB_AUTODISABLE_ENABLED", cfg.AutoDisable.Enabled, true},
		{"STREAMING_HUB_AUTODISABLE_FAILURE_WINDOW", cfg.AutoDisable.FailureWindow, 120 * time.Hour},
		{"STREAMING_HUB_AUTODISABLE_FAILURE_SPREAD", cfg.AutoDisable.FailureSpread, 12 * time.Hour},
		{"STREAMING_HUB_ROTATION_OVERLAP", cfg.RotationOverlap, 24 * time.Hour},
		{"STREAMING_HUB_PULL_RATE", cfg.Pull.Rate, 100.0},
		{"STREAMING_HUB_PULL_BURST", cfg.Pull.Burst, 200},
		{"STREAMING_HUB_RETENTION_EVENTS", cfg.Retention.Events, 168 * time.Hour},
		{"STREAMING_HUB_RETENTION_DELIVERIES", cfg.Retention.Deliveries, 168 * time.Hour},
		{"STREAMING_HUB_RETENTION_QUARANTINE", cfg.Retention.Quarantine, 720 * time.Hour},
		{"STREAMING_HUB_RETENTION_INTERVAL", cfg.Retention.Interval, 15 * time.Minute},
		{"STREAMING_HUB_KEK_SOURCE", cfg.KEK.Source, KEKSourceEnv},
		{"STREAMING_HUB_KEK_REF", cfg.KEK.Ref, ""},
		{"STREAMING_HUB_DEV_KEK", cfg.KEK.DevKEK, ""},
		{"STREAMING_HUB_PORTAL_ENABLED", cfg.Portal.Enabled, true},
		{"STREAMING_HUB_PUBLIC_URL", cfg.Portal.PublicURL, ""},
		{"STREAMING_HUB_PORTAL_FRAME_ANCESTORS", cfg.Portal.FrameAncestors, []string{}},
		{"STREAMING_HUB_SHUTDOWN_TIMEOUT", cfg.ShutdownTimeout, 30 * time.Second},
		{"STREAMING_HUB_ADMIN_TOKEN", cfg.AdminToken, ""},
	}

	if len(tests) != len(registry) {
		t.Errorf("test covers %d settings, registry has %d", len(tests), len(registry))
	}
	for _, tt := range tests {
		if _, ok := lookupSetting(tt.env); !ok {
			t.Errorf("%s is not in the registry", tt.env)
		}
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s default = %#v, want %#v", tt.env, tt.got, tt.want)
		}
		if entry := shown(t, cfg, tt.env); entry.Source != SourceDefault {
			t.Errorf("%s source = %q, want default", tt.env, entry.Source)
		}
	}
}

func TestRegistryIsConsistent(t *testing.T) {
	t.Parallel()
	envs := map[string]bool{}
	keys := map[string]bool{}
	for _, s := range Settings() {
		if envs[s.Env] || keys[s.Key] {
			t.Errorf("%s: duplicate env name or key", s.Env)
		}
		envs[s.Env], keys[s.Key] = true, true
		if want := strings.ToLower(strings.TrimPrefix(s.Env, EnvPrefix)); s.Key != want || !strings.HasPrefix(s.Env, EnvPrefix) {
			t.Errorf("%s: key %q, want %q", s.Env, s.Key, want)
		}
		if s.Description == "" || s.Allowed() == "" {
			t.Errorf("%s: needs a description and an allowed phrase", s.Env)
		}
		if err := s.codec.decode(&Config{}, s.Default); err != nil {
			t.Errorf("%s: default %q does not decode: %v", s.Env, s.Default, err)
		}
	}

	var secrets []string
	for _, s := range Settings() {
		if s.Secret {
			secrets = append(secrets, s.Env)
		}
	}
	wantSecrets := []string{
		"STREAMING_HUB_POSTGRES_DSN", "STREAMING_HUB_KAFKA_SASL_PASSWORD", "STREAMING_HUB_KAFKA_OAUTH_CLIENT_SECRET", "STREAMING_HUB_KAFKA_SCRAM_PASSWORD",
		"STREAMING_HUB_DEV_KEK", "STREAMING_HUB_ADMIN_TOKEN",
	}
	if !slices.Equal(secrets, wantSecrets) {
		t.Errorf("secret settings = %v, want %v", secrets, wantSecrets)
	}
}

func TestSettingsReturnsACopy(t *testing.T) {
	t.Parallel()
	Settings()[0].Default = "changed"
	if registry[0].Default == "changed" {
		t.Error("Settings() exposed the registry itself")
	}
}

func TestWantsTopic(t *testing.T) {
	t.Parallel()
	kafka := mustLoad(t, LoadOptions{}).Kafka
	tests := []struct {
		topic string
		want  bool
	}{
		{"lerian.streaming.ledger.transactions", true},
		{"lerian.streaming.x", true},
		{"lerian.streaming.ledger.commands", false},
		{"lerian.streaming.ledger.dlq", false},
		{"lerian.streaming.", false},
		{"other.topic", false},
		{"__consumer_offsets", false},
	}
	for _, tt := range tests {
		if got := kafka.WantsTopic(tt.topic); got != tt.want {
			t.Errorf("WantsTopic(%q) = %v, want %v", tt.topic, got, tt.want)
		}
	}

	noExclude := kafka
	noExclude.TopicsExclude = nil
	if !noExclude.WantsTopic("lerian.streaming.ledger.dlq") {
		t.Error("with no exclusion, a matching topic must be wanted")
	}
	if (KafkaConfig{}).WantsTopic("lerian.streaming.x") {
		t.Error("a KafkaConfig without a topic pattern must want nothing")
	}
}

func TestRoleParts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		role               Role
		ingest, deliveries bool
	}{
		{RoleAll, true, true},
		{RoleIngest, true, false},
		{RoleDelivery, false, true},
		{Role("bogus"), false, false},
	}
	for _, tt := range tests {
		if tt.role.RunsIngest() != tt.ingest || tt.role.RunsDelivery() != tt.deliveries {
			t.Errorf("%s: RunsIngest=%v RunsDelivery=%v, want %v %v",
				tt.role, tt.role.RunsIngest(), tt.role.RunsDelivery(), tt.ingest, tt.deliveries)
		}
	}
}
