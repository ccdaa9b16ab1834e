package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestLoadRejectsBadValues(t *testing.T) {
	t.Parallel()
	const durationSyntax = ", written like 250ms, 30s or 2h"
	const publicURLRule = "empty or an http:// or https:// URL with a host and no query, fragment or user name, such as https://hub.example.com"
	const originsRule = "empty or a comma-separated list of origins such as https://app.example.com or https://app.example.com:8443"
	tests := []struct {
		env   map[string]string
		lines []string
	}{
		{map[string]string{"STREAMING_HUB_ENV": "prod"},
			[]string{`invalid STREAMING_HUB_ENV="prod": must be one of local, staging, production`}},
		{map[string]string{"STREAMING_HUB_ENV": ""},
			[]string{`invalid STREAMING_HUB_ENV="": must be one of local, staging, production`}},
		{map[string]string{"STREAMING_HUB_LOG_LEVEL": "verbose"},
			[]string{`invalid STREAMING_HUB_LOG_LEVEL="verbose": must be one of debug, info, warn, error`}},
		{map[string]string{"STREAMING_HUB_ROLE": "both"},
			[]string{`invalid STREAMING_HUB_ROLE="both": must be one of all, ingest, delivery`}},
		{map[string]string{"STREAMING_HUB_HTTP_LISTEN_ADDR": "8080"},
			[]string{`invalid STREAMING_HUB_HTTP_LISTEN_ADDR="8080": must be host:port (host may be empty) with a port from 0 to 65535`}},
		{map[string]string{"STREAMING_HUB_HTTP_LISTEN_ADDR": ":65536"},
			[]string{`invalid STREAMING_HUB_HTTP_LISTEN_ADDR=":65536": must be host:port (host may be empty) with a port from 0 to 65535`}},
		{map[string]string{"STREAMING_HUB_METRICS_ENABLED": "yes"},
			[]string{`invalid STREAMING_HUB_METRICS_ENABLED="yes": must be true or false`}},
		{map[string]string{"STREAMING_HUB_METRICS_TENANT_LIMIT": "0"},
			[]string{`invalid STREAMING_HUB_METRICS_TENANT_LIMIT="0": must be an integer from 1 to 1000`}},
		{map[string]string{"STREAMING_HUB_POSTGRES_MAX_OPEN_CONNS": "0"},
			[]string{`invalid STREAMING_HUB_POSTGRES_MAX_OPEN_CONNS="0": must be an integer from 1 to 1000`}},
		{map[string]string{"STREAMING_HUB_POSTGRES_MAX_OPEN_CONNS": "1001"},
			[]string{`invalid STREAMING_HUB_POSTGRES_MAX_OPEN_CONNS="1001": must be an integer from 1 to 1000`}},
		{map[string]string{"STREAMING_HUB_KAFKA_BROKERS": " , "},
			[]string{`invalid STREAMING_HUB_KAFKA_BROKERS=",": must be a comma-separated list of host:port with ports from 1 to 65535`}},
		{map[string]string{"STREAMING_HUB_KAFKA_BROKERS": "a:9092,kafka"},
			[]string{`invalid STREAMING_HUB_KAFKA_BROKERS="a:9092,kafka": must be a comma-separated list of host:port with ports from 1 to 65535: "kafka": missing port in address`}},
		{map[string]string{"STREAMING_HUB_KAFKA_BROKERS": ":9092"},
			[]string{`invalid STREAMING_HUB_KAFKA_BROKERS=":9092": must be a comma-separated list of host:port with ports from 1 to 65535: ":9092": missing host`}},
		{map[string]string{"STREAMING_HUB_KAFKA_BROKERS": "kafka:0"},
			[]string{`invalid STREAMING_HUB_KAFKA_BROKERS="kafka:0": must be a comma-separated list of host:port with ports from 1 to 65535: "kafka:0": port must be a number from 1 to 65535`}},
		{map[string]string{"STREAMING_HUB_KAFKA_GROUP": ""},
			[]string{`invalid STREAMING_HUB_KAFKA_GROUP="": must be non-empty text`}},
		{map[string]string{"STREAMING_HUB_KAFKA_TOPICS": "(lerian"},
			[]string{"invalid STREAMING_HUB_KAFKA_TOPICS=\"(lerian\": must be a non-empty Go regular expression: error parsing regexp: missing closing ): `(lerian`"}},
		{map[string]string{"STREAMING_HUB_KAFKA_TOPICS": ""},
			[]string{`invalid STREAMING_HUB_KAFKA_TOPICS="": must be a non-empty Go regular expression`}},
		{map[string]string{"STREAMING_HUB_KAFKA_TOPICS_EXCLUDE": "[dlq"},
			[]string{"invalid STREAMING_HUB_KAFKA_TOPICS_EXCLUDE=\"[dlq\": must be a Go regular expression, or empty to exclude nothing: error parsing regexp: missing closing ]: `[dlq`"}},
		{map[string]string{"STREAMING_HUB_KAFKA_METADATA_REFRESH": "500ms"},
			[]string{`invalid STREAMING_HUB_KAFKA_METADATA_REFRESH="500ms": must be a duration of at least 1s` + durationSyntax}},
		{map[string]string{"STREAMING_HUB_KAFKA_METADATA_REFRESH": "30"},
			[]string{`invalid STREAMING_HUB_KAFKA_METADATA_REFRESH="30": must be a duration of at least 1s` + durationSyntax}},
		{map[string]string{"STREAMING_HUB_KAFKA_INSTANCE_ID": "hub 0"},
			[]string{`invalid STREAMING_HUB_KAFKA_INSTANCE_ID="hub 0": must be empty or 1 to 249 letters, digits, '.', '_' or '-'`}},
		{map[string]string{"STREAMING_HUB_OPERATIONAL_TOPIC": "hub events"},
			[]string{`invalid STREAMING_HUB_OPERATIONAL_TOPIC="hub events": must be empty or a Kafka topic name: 1 to 249 letters, digits, '.', '_' or '-'`}},
		{map[string]string{"STREAMING_HUB_OPERATIONAL_TOPIC": "lerian.streaming.hub"},
			[]string{`invalid STREAMING_HUB_OPERATIONAL_TOPIC="lerian.streaming.hub": the hub consumes this topic itself: it matches STREAMING_HUB_KAFKA_TOPICS and not STREAMING_HUB_KAFKA_TOPICS_EXCLUDE; pick a topic outside them`}},
		{map[string]string{"STREAMING_HUB_KAFKA_SESSION_TIMEOUT": "500ms"},
			[]string{`invalid STREAMING_HUB_KAFKA_SESSION_TIMEOUT="500ms": must be a duration from 1s to 30m0s` + durationSyntax}},
		{map[string]string{"STREAMING_HUB_KAFKA_SESSION_TIMEOUT": "31m"},
			[]string{`invalid STREAMING_HUB_KAFKA_SESSION_TIMEOUT="31m": must be a duration from 1s to 30m0s` + durationSyntax}},
		{map[string]string{"STREAMING_HUB_KAFKA_TLS_ENABLED": "on"},
			[]string{`invalid STREAMING_HUB_KAFKA_TLS_ENABLED="on": must be true or false`}},
		{map[string]string{"STREAMING_HUB_KAFKA_SCRAM_MECHANISM": "PLAIN"},
			[]string{`invalid STREAMING_HUB_KAFKA_SCRAM_MECHANISM="PLAIN": must be one of empty, SCRAM-SHA-256, SCRAM-SHA-512`}},
		{map[string]string{"STREAMING_HUB_KAFKA_SCRAM_MECHANISM": "SCRAM-SHA-512"},
			[]string{
				`invalid STREAMING_HUB_KAFKA_SCRAM_USERNAME="": required when STREAMING_HUB_KAFKA_SCRAM_MECHANISM is SCRAM-SHA-512`,
				`invalid STREAMING_HUB_KAFKA_SCRAM_PASSWORD="": required when STREAMING_HUB_KAFKA_SCRAM_MECHANISM is SCRAM-SHA-512`,
			}},
		{map[string]string{"STREAMING_HUB_KAFKA_SCRAM_MECHANISM": "scram-sha-256", "STREAMING_HUB_KAFKA_SCRAM_USERNAME": "hub"},
			[]string{`invalid STREAMING_HUB_KAFKA_SCRAM_PASSWORD="": required when STREAMING_HUB_KAFKA_SCRAM_MECHANISM is SCRAM-SHA-256`}},
		{map[string]string{"STREAMING_HUB_KAFKA_SASL_MECHANISM": "GSSAPI"},
			[]string{`invalid STREAMING_HUB_KAFKA_SASL_MECHANISM="GSSAPI": must be one of empty, PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, AWS_MSK_IAM`}},
		{map[string]string{"STREAMING_HUB_KAFKA_SASL_MECHANISM": "plain", "STREAMING_HUB_KAFKA_SASL_USERNAME": "hub"},
			[]string{`invalid STREAMING_HUB_KAFKA_SASL_PASSWORD="": required when STREAMING_HUB_KAFKA_SASL_MECHANISM is PLAIN`}},
		{map[string]string{"STREAMING_HUB_KAFKA_SASL_MECHANISM": "OAUTHBEARER", "STREAMING_HUB_KAFKA_OAUTH_CLIENT_ID": "hub"},
			[]string{
				`invalid STREAMING_HUB_KAFKA_OAUTH_TOKEN_URL="": required when STREAMING_HUB_KAFKA_SASL_MECHANISM is OAUTHBEARER`,
				`invalid STREAMING_HUB_KAFKA_OAUTH_CLIENT_SECRET="": required when STREAMING_HUB_KAFKA_SASL_MECHANISM is OAUTHBEARER`,
			}},
		{map[string]string{"STREAMING_HUB_KAFKA_OAUTH_TOKEN_URL": "idp.example.com/token"},
			[]string{`invalid STREAMING_HUB_KAFKA_OAUTH_TOKEN_URL="idp.example.com/token": must be empty or an absolute http:// or https:// URL`}},
		{map[string]string{"STREAMING_HUB_KAFKA_SASL_MECHANISM": "PLAIN", "STREAMING_HUB_KAFKA_SCRAM_MECHANISM": "SCRAM-SHA-256"},
			[]string{`invalid STREAMING_HUB_KAFKA_SCRAM_MECHANISM="SCRAM-SHA-256": is deprecated and must be empty when STREAMING_HUB_KAFKA_SASL_MECHANISM is set`}},
		{map[string]string{"STREAMING_HUB_KAFKA_TLS_CA_FILE": "/nonexistent/ca.pem"},
			[]string{`invalid STREAMING_HUB_KAFKA_TLS_CA_FILE="/nonexistent/ca.pem": must be empty or the path of a readable file: no such file or directory`}},
		{map[string]string{"STREAMING_HUB_KAFKA_TLS_CERT_FILE": "/"},
			[]string{
				`invalid STREAMING_HUB_KAFKA_TLS_CERT_FILE="/": must be empty or the path of a readable file: it is a directory`,
			}},
		{map[string]string{"STREAMING_HUB_KAFKA_TLS_KEY_FILE": "/etc/hostname"},
			[]string{`invalid STREAMING_HUB_KAFKA_TLS_CERT_FILE="": required when STREAMING_HUB_KAFKA_TLS_KEY_FILE is set`}},
		{map[string]string{"STREAMING_HUB_HTTP_TLS_CERT_FILE": "/etc/hostname"},
			[]string{`invalid STREAMING_HUB_HTTP_TLS_KEY_FILE="": required when STREAMING_HUB_HTTP_TLS_CERT_FILE is set`}},
		{map[string]string{"STREAMING_HUB_HTTP_TLS_KEY_FILE": "/nonexistent/tls.key"},
			[]string{`invalid STREAMING_HUB_HTTP_TLS_KEY_FILE="/nonexistent/tls.key": must be empty or the path of a readable file: no such file or directory`}},
		{map[string]string{"STREAMING_HUB_DISPATCH_MAX_IN_FLIGHT": "0"},
			[]string{`invalid STREAMING_HUB_DISPATCH_MAX_IN_FLIGHT="0": must be an integer from 1 to 10000`}},
		{map[string]string{"STREAMING_HUB_DISPATCH_TENANT_MAX_IN_FLIGHT": "0"},
			[]string{`invalid STREAMING_HUB_DISPATCH_TENANT_MAX_IN_FLIGHT="0": must be an integer from 1 to 10000`}},
		{map[string]string{"STREAMING_HUB_DISPATCH_DESTINATION_MAX_IN_FLIGHT": "10001"},
			[]string{`invalid STREAMING_HUB_DISPATCH_DESTINATION_MAX_IN_FLIGHT="10001": must be an integer from 1 to 10000`}},
		{map[string]string{"STREAMING_HUB_DISPATCH_MAX_IN_FLIGHT": "32"},
			[]string{`invalid STREAMING_HUB_DISPATCH_TENANT_MAX_IN_FLIGHT="64": must be at most STREAMING_HUB_DISPATCH_MAX_IN_FLIGHT (32)`}},
		{map[string]string{"STREAMING_HUB_DISPATCH_TENANT_MAX_IN_FLIGHT": "8"},
			[]string{`invalid STREAMING_HUB_DISPATCH_DESTINATION_MAX_IN_FLIGHT="16": must be at most STREAMING_HUB_DISPATCH_TENANT_MAX_IN_FLIGHT (8)`}},
		{map[string]string{"STREAMING_HUB_MAX_EVENT_BYTES": "0"},
			[]string{`invalid STREAMING_HUB_MAX_EVENT_BYTES="0": must be an integer from 1 to 104857600`}},
		{map[string]string{"STREAMING_HUB_MAX_EVENT_BYTES": "104857601"},
			[]string{`invalid STREAMING_HUB_MAX_EVENT_BYTES="104857601": must be an integer from 1 to 104857600`}},
		{map[string]string{"STREAMING_HUB_MAX_HEADER_COUNT": "15"},
			[]string{`invalid STREAMING_HUB_MAX_HEADER_COUNT="15": must be an integer from 16 to 10000`}},
		{map[string]string{"STREAMING_HUB_MAX_HEADER_BYTES": "1023"},
			[]string{`invalid STREAMING_HUB_MAX_HEADER_BYTES="1023": must be an integer from 1024 to 16777216`}},
		{map[string]string{"STREAMING_HUB_MAX_ATTRIBUTE_BYTES": "1048577"},
			[]string{`invalid STREAMING_HUB_MAX_ATTRIBUTE_BYTES="1048577": must be an integer from 256 to 1048576`}},
		{map[string]string{"STREAMING_HUB_ROSTER_REFRESH": "99ms"},
			[]string{`invalid STREAMING_HUB_ROSTER_REFRESH="99ms": must be a duration of at least 100ms` + durationSyntax}},
		{map[string]string{"STREAMING_HUB_DISPATCH_WORKERS": "abc"},
			[]string{`invalid STREAMING_HUB_DISPATCH_WORKERS="abc": must be an integer from 1 to 1024`}},
		{map[string]string{"STREAMING_HUB_DISPATCH_WORKERS": "1025"},
			[]string{`invalid STREAMING_HUB_DISPATCH_WORKERS="1025": must be an integer from 1 to 1024`}},
		{map[string]string{"STREAMING_HUB_DISPATCH_CLAIM_BATCH": "1001"},
			[]string{`invalid STREAMING_HUB_DISPATCH_CLAIM_BATCH="1001": must be an integer from 1 to 1000`}},
		{map[string]string{"STREAMING_HUB_DISPATCH_IDLE_INTERVAL": "5ms"},
			[]string{`invalid STREAMING_HUB_DISPATCH_IDLE_INTERVAL="5ms": must be a duration of at least 10ms` + durationSyntax}},
		{map[string]string{"STREAMING_HUB_FILTER_EVAL_TIMEOUT": "10us"},
			[]string{`invalid STREAMING_HUB_FILTER_EVAL_TIMEOUT="10us": must be a duration of at least 100µs` + durationSyntax}},
		{map[string]string{"STREAMING_HUB_FILTER_TENANT_BUDGET": "none"},
			[]string{`invalid STREAMING_HUB_FILTER_TENANT_BUDGET="none": must be a duration of at least 1ms` + durationSyntax}},
		{map[string]string{"STREAMING_HUB_MAX_SUBSCRIPTIONS_PER_TENANT": "0"},
			[]string{`invalid STREAMING_HUB_MAX_SUBSCRIPTIONS_PER_TENANT="0": must be an integer from 1 to 100000`}},
		{map[string]string{"STREAMING_HUB_MAX_SUBSCRIPTIONS_PER_TENANT": "100001"},
			[]string{`invalid STREAMING_HUB_MAX_SUBSCRIPTIONS_PER_TENANT="100001": must be an integer from 1 to 100000`}},
		{map[string]string{"STREAMING_HUB_POISON_THRESHOLD": "0"},
			[]string{`invalid STREAMING_HUB_POISON_THRESHOLD="0": must be an integer of at least 1`}},
		{map[string]string{"STREAMING_HUB_BREAKER_FAILURES": "-1"},
			[]string{`invalid STREAMING_HUB_BREAKER_FAILURES="-1": must be an integer of at least 1`}},
		{map[string]string{"STREAMING_HUB_BREAKER_COOLDOWN": "0s"},
			[]string{`invalid STREAMING_HUB_BREAKER_COOLDOWN="0s": must be a positive duration` + durationSyntax}},
		{map[string]string{"STREAMING_HUB_ALLOW_PRIVATE_SINKS": "maybe"},
			[]string{`invalid STREAMING_HUB_ALLOW_PRIVATE_SINKS="maybe": must be true or false`}},
		{map[string]string{"STREAMING_HUB_AUTODISABLE_ENABLED": "2"},
			[]string{`invalid STREAMING_HUB_AUTODISABLE_ENABLED="2": must be true or false`}},
		{map[string]string{"STREAMING_HUB_AUTODISABLE_FAILURE_WINDOW": "0"},
			[]string{`invalid STREAMING_HUB_AUTODISABLE_FAILURE_WINDOW="0": must be a positive duration` + durationSyntax}},
		{map[string]string{"STREAMING_HUB_AUTODISABLE_FAILURE_SPREAD": "-1h"},
			[]string{`invalid STREAMING_HUB_AUTODISABLE_FAILURE_SPREAD="-1h": must be a duration of at least 0s` + durationSyntax}},
		{map[string]string{"STREAMING_HUB_ROTATION_OVERLAP": "1d"},
			[]string{`invalid STREAMING_HUB_ROTATION_OVERLAP="1d": must be a duration of at least 0s` + durationSyntax}},
		{map[string]string{"STREAMING_HUB_PULL_RATE": "0"},
			[]string{`invalid STREAMING_HUB_PULL_RATE="0": must be a number greater than 0`}},
		{map[string]string{"STREAMING_HUB_PULL_RATE": "NaN"},
			[]string{`invalid STREAMING_HUB_PULL_RATE="NaN": must be a number greater than 0`}},
		{map[string]string{"STREAMING_HUB_PULL_RATE": "+Inf"},
			[]string{`invalid STREAMING_HUB_PULL_RATE="+Inf": must be a number greater than 0`}},
		{map[string]string{"STREAMING_HUB_RETENTION_EVENTS": "72h"},
			[]string{`invalid STREAMING_HUB_RETENTION_EVENTS="72h": must be a duration of at least 120h, the longest retry curve a subscription may have, written like 250ms, 30s or 2h`}},
		{map[string]string{"STREAMING_HUB_RETENTION_DELIVERIES": "119h59m"},
			[]string{`invalid STREAMING_HUB_RETENTION_DELIVERIES="119h59m": must be a duration of at least 120h, the longest retry curve a subscription may have, written like 250ms, 30s or 2h`}},
		{map[string]string{"STREAMING_HUB_RETENTION_QUARANTINE": "0s"},
			[]string{`invalid STREAMING_HUB_RETENTION_QUARANTINE="0s": must be a positive duration, written like 250ms, 30s or 2h`}},
		{map[string]string{"STREAMING_HUB_RETENTION_INTERVAL": "10ms"},
			[]string{`invalid STREAMING_HUB_RETENTION_INTERVAL="10ms": must be a duration of at least 1s, written like 250ms, 30s or 2h`}},
		{map[string]string{"STREAMING_HUB_PULL_BURST": "0"},
			[]string{`invalid STREAMING_HUB_PULL_BURST="0": must be an integer of at least 1`}},
		{map[string]string{"STREAMING_HUB_KEK_SOURCE": "vault"},
			[]string{`invalid STREAMING_HUB_KEK_SOURCE="vault": must be one of env`}},
		{map[string]string{"STREAMING_HUB_KEK_REF": "HUB-KEK"},
			[]string{`invalid STREAMING_HUB_KEK_REF="HUB-KEK": must be empty or an environment variable name (letters, digits and _, not starting with a digit)`}},
		{map[string]string{"STREAMING_HUB_KEK_REF": "1KEK"},
			[]string{`invalid STREAMING_HUB_KEK_REF="1KEK": must be empty or an environment variable name (letters, digits and _, not starting with a digit)`}},
		{map[string]string{"STREAMING_HUB_SHUTDOWN_TIMEOUT": "-5s"},
			[]string{`invalid STREAMING_HUB_SHUTDOWN_TIMEOUT="-5s": must be a positive duration` + durationSyntax}},
		{map[string]string{"STREAMING_HUB_PORTAL_ENABLED": "on"},
			[]string{`invalid STREAMING_HUB_PORTAL_ENABLED="on": must be true or false`}},
		{map[string]string{"STREAMING_HUB_PUBLIC_URL": "hub.example.com"},
			[]string{`invalid STREAMING_HUB_PUBLIC_URL="hub.example.com": must be ` + publicURLRule}},
		{map[string]string{"STREAMING_HUB_PUBLIC_URL": "ftp://hub.example.com"},
			[]string{`invalid STREAMING_HUB_PUBLIC_URL="ftp://hub.example.com": must be ` + publicURLRule}},
		{map[string]string{"STREAMING_HUB_PUBLIC_URL": "https://hub.example.com/?x=1"},
			[]string{`invalid STREAMING_HUB_PUBLIC_URL="https://hub.example.com/?x=1": must be ` + publicURLRule}},
		{map[string]string{"STREAMING_HUB_PUBLIC_URL": "https://me@hub.example.com"},
			[]string{`invalid STREAMING_HUB_PUBLIC_URL="https://me@hub.example.com": must be ` + publicURLRule}},
		{map[string]string{"STREAMING_HUB_PORTAL_FRAME_ANCESTORS": "https://app.example.com, *"},
			[]string{`invalid STREAMING_HUB_PORTAL_FRAME_ANCESTORS="https://app.example.com, *": must be ` + originsRule + `: "*" is not an origin`}},
		{map[string]string{"STREAMING_HUB_PORTAL_FRAME_ANCESTORS": "https://app.example.com/path"},
			[]string{`invalid STREAMING_HUB_PORTAL_FRAME_ANCESTORS="https://app.example.com/path": must be ` + originsRule + `: "https://app.example.com/path" is not an origin`}},
		{map[string]string{"STREAMING_HUB_PORTAL_FRAME_ANCESTORS": "https://a.example.com 'unsafe-inline'"},
			[]string{`invalid STREAMING_HUB_PORTAL_FRAME_ANCESTORS="https://a.example.com 'unsafe-inline'": must be ` + originsRule + `: "https://a.example.com 'unsafe-inline'" is not an origin`}},
		{map[string]string{"STREAMING_HUB_ADMIN_TOKEN": "too-short"},
			[]string{`invalid STREAMING_HUB_ADMIN_TOKEN="****": must be empty or at least 16 characters`}},
		{
			// every problem is reported, in registry order
			map[string]string{
				"STREAMING_HUB_SHUTDOWN_TIMEOUT": "soon",
				"STREAMING_HUB_ENV":              "dev",
				"STREAMING_HUB_PULL_BURST":       "lots",
			},
			[]string{
				`invalid STREAMING_HUB_ENV="dev": must be one of local, staging, production`,
				`invalid STREAMING_HUB_PULL_BURST="lots": must be an integer of at least 1`,
				`invalid STREAMING_HUB_SHUTDOWN_TIMEOUT="soon": must be a positive duration` + durationSyntax,
			},
		},
		{
			// a value spanning lines still yields one line per problem
			map[string]string{"STREAMING_HUB_KAFKA_TOPICS": "a\n("},
			[]string{"invalid STREAMING_HUB_KAFKA_TOPICS=\"a\\n(\": must be a non-empty Go regular expression: error parsing regexp: missing closing ): `a; (`"},
		},
	}

	covered := map[string]bool{}
	for _, tt := range tests {
		for env := range tt.env {
			covered[env] = true
		}
		got := problemLines(t, LoadOptions{LookupEnv: envOf(tt.env)})
		if !slices.Equal(got, tt.lines) {
			t.Errorf("env %q:\ngot  %q\nwant %q", tt.env, got, tt.lines)
		}
		for _, line := range got {
			if strings.ContainsAny(line, "\r\n") {
				t.Errorf("problem spans lines: %q", line)
			}
		}
	}

	// Every setting that restricts its value must have a failure case above.
	for _, s := range Settings() {
		if s.Allowed() != "any text" && !covered[s.Env] {
			t.Errorf("no failure case for %s (%s)", s.Env, s.Allowed())
		}
	}
}

func TestValidationErrorJoinsLines(t *testing.T) {
	t.Parallel()
	_, err := Load(LoadOptions{LookupEnv: envOf(map[string]string{
		"STREAMING_HUB_ROLE":      "x",
		"STREAMING_HUB_KEK_REF":   "no way",
		"STREAMING_HUB_DEV_KEK":   "fine, any text",
		"STREAMING_HUB_ENV":       "local",
		"STREAMING_HUB_LOG_LEVEL": "warn",
	})})
	var validation *ValidationError
	if !errors.As(err, &validation) || len(validation.Problems) != 2 {
		t.Fatalf("err = %v, want a *ValidationError with 2 problems", err)
	}
	want := validation.Problems[0].String() + "\n" + validation.Problems[1].String()
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if p := validation.Problems[0]; p.Setting != "STREAMING_HUB_ROLE" || p.Value != "x" || p.Reason != "must be one of all, ingest, delivery" {
		t.Errorf("first problem = %+v", p)
	}
}

// Values that only differ in case from an allowed one are accepted and
// stored in canonical form.
func TestLoadEnumsIgnoreCase(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, LoadOptions{LookupEnv: envOf(map[string]string{
		"STREAMING_HUB_ENV":                   "Staging",
		"STREAMING_HUB_ROLE":                  "INGEST",
		"STREAMING_HUB_KAFKA_SCRAM_MECHANISM": "scram-sha-256",
		"STREAMING_HUB_KAFKA_SCRAM_USERNAME":  "hub",
		"STREAMING_HUB_KAFKA_SCRAM_PASSWORD":  "pw",
	})})
	if cfg.Environment != EnvironmentStaging || cfg.Role != RoleIngest || cfg.Kafka.SASLMechanism != SASLScramSHA256 {
		t.Errorf("Environment=%q Role=%q SASLMechanism=%q, want canonical values",
			cfg.Environment, cfg.Role, cfg.Kafka.SASLMechanism)
	}
}

// The revision-1 SCRAM settings still work, as the SASL settings they
// became, and say once that they are deprecated.
func TestDeprecatedSCRAMSettingsBecomeSASL(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, LoadOptions{LookupEnv: envOf(map[string]string{
		"STREAMING_HUB_KAFKA_SCRAM_MECHANISM": "SCRAM-SHA-512",
		"STREAMING_HUB_KAFKA_SCRAM_USERNAME":  "hub",
		"STREAMING_HUB_KAFKA_SCRAM_PASSWORD":  "pw",
	})})
	k := cfg.Kafka
	if k.SASLMechanism != SASLScramSHA512 || k.SASLUsername != "hub" || k.SASLPassword != "pw" {
		t.Errorf("SASL = %q %q %q, want the SCRAM settings' values", k.SASLMechanism, k.SASLUsername, k.SASLPassword)
	}
	if len(cfg.Deprecations) != 1 || !strings.Contains(cfg.Deprecations[0], "STREAMING_HUB_KAFKA_SASL_MECHANISM") {
		t.Errorf("deprecations = %q, want one naming the replacement", cfg.Deprecations)
	}
	if fresh := mustLoad(t, LoadOptions{LookupEnv: envOf(nil)}); len(fresh.Deprecations) != 0 {
		t.Errorf("deprecations without deprecated settings: %q", fresh.Deprecations)
	}
}

// Any TLS file implies TLS, so a client certificate is never sent in clear.
func TestKafkaTLSFilesImplyTLS(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, LoadOptions{LookupEnv: envOf(map[string]string{"STREAMING_HUB_KAFKA_TLS_CA_FILE": "/etc/hostname"})})
	if !cfg.Kafka.TLSEnabled {
		t.Error("a CA file left TLS off")
	}
}

func TestLoadAcceptsBoundaryValues(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, LoadOptions{LookupEnv: envOf(map[string]string{
		"STREAMING_HUB_HTTP_LISTEN_ADDR":           "127.0.0.1:0",
		"STREAMING_HUB_KAFKA_BROKERS":              "[::1]:9092,kafka:65535",
		"STREAMING_HUB_DISPATCH_WORKERS":           "1024",
		"STREAMING_HUB_MAX_EVENT_BYTES":            "104857600",
		"STREAMING_HUB_KAFKA_METADATA_REFRESH":     "1s",
		"STREAMING_HUB_ROSTER_REFRESH":             "100ms",
		"STREAMING_HUB_DISPATCH_IDLE_INTERVAL":     "10ms",
		"STREAMING_HUB_AUTODISABLE_FAILURE_SPREAD": "0",
		"STREAMING_HUB_ROTATION_OVERLAP":           "0s",
		"STREAMING_HUB_PULL_RATE":                  "0.001",
		"STREAMING_HUB_KEK_REF":                    "_HUB_KEK_1",
		"STREAMING_HUB_ADMIN_TOKEN":                "ññññññññññññññññ", // 16 characters, 32 bytes
		"STREAMING_HUB_METRICS_ENABLED":            "0",
	})})
	if cfg.Dispatch.Workers != 1024 || cfg.Pull.Rate != 0.001 || cfg.MetricsEnabled || len(cfg.Kafka.Brokers) != 2 {
		t.Errorf("unexpected config: %+v", cfg)
	}
}

func TestPortalBaseURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ publicURL, listen, want string }{
		{"https://hub.example.com", ":8080", "https://hub.example.com"},
		{"", ":8080", "http://localhost:8080"},
		{"", "0.0.0.0:9000", "http://localhost:9000"},
		{"", "[::]:9000", "http://localhost:9000"},
		{"", "10.0.0.5:8080", "http://10.0.0.5:8080"},
		{"", "[fd00::5]:8080", "http://[fd00::5]:8080"},
	} {
		c := Config{HTTPListenAddr: tc.listen, Portal: PortalConfig{PublicURL: tc.publicURL}}
		if got := c.PortalBaseURL(); got != tc.want {
			t.Errorf("public URL %q, listener %q: %q, want %q", tc.publicURL, tc.listen, got, tc.want)
		}
	}
}
