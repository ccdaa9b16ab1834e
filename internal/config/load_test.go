package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// testFlags declares one flag per kind of value and binds each to a setting.
func testFlags(t *testing.T) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.String("role", "", "")
	fs.Int("workers", 0, "")
	fs.Duration("cooldown", 0, "")
	fs.StringSlice("brokers", nil, "")
	fs.Bool("allow-private-sinks", false, "")
	for flag, env := range map[string]string{
		"role":                "STREAMING_HUB_ROLE",
		"workers":             "STREAMING_HUB_DISPATCH_WORKERS",
		"cooldown":            "STREAMING_HUB_BREAKER_COOLDOWN",
		"brokers":             "STREAMING_HUB_KAFKA_BROKERS",
		"allow-private-sinks": "STREAMING_HUB_ALLOW_PRIVATE_SINKS",
	} {
		if err := BindFlag(fs, flag, env); err != nil {
			t.Fatal(err)
		}
	}
	return fs
}

func TestLoadPrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env  string
		get  func(*Config) any
		file string // the YAML line giving the file's value
		envV string // the environment's value
		flag string // the command-line argument giving the flag's value
		// expected values when the highest present layer is the default,
		// the file, the env and the flag
		want [4]any
	}{
		{
			env: "STREAMING_HUB_ROLE", get: func(c *Config) any { return c.Role },
			file: "role: ingest", envV: "delivery", flag: "--role=all",
			want: [4]any{RoleAll, RoleIngest, RoleDelivery, RoleAll},
		},
		{
			env: "STREAMING_HUB_DISPATCH_WORKERS", get: func(c *Config) any { return c.Dispatch.Workers },
			file: "dispatch_workers: 3", envV: "4", flag: "--workers=5",
			want: [4]any{8, 3, 4, 5},
		},
		{
			env: "STREAMING_HUB_BREAKER_COOLDOWN", get: func(c *Config) any { return c.Breaker.Cooldown },
			file: "breaker_cooldown: 1m", envV: "2m", flag: "--cooldown=3m",
			want: [4]any{30 * time.Second, time.Minute, 2 * time.Minute, 3 * time.Minute},
		},
		{
			env: "STREAMING_HUB_KAFKA_BROKERS", get: func(c *Config) any { return c.Kafka.Brokers },
			file: "kafka_brokers: [f1:9092, f2:9092]", envV: "e1:9092,e2:9092", flag: "--brokers=c1:9092,c2:9092",
			want: [4]any{
				[]string{"localhost:9092"}, []string{"f1:9092", "f2:9092"},
				[]string{"e1:9092", "e2:9092"}, []string{"c1:9092", "c2:9092"},
			},
		},
		{
			env: "STREAMING_HUB_ALLOW_PRIVATE_SINKS", get: func(c *Config) any { return c.AllowPrivateSinks },
			file: "allow_private_sinks: true", envV: "false", flag: "--allow-private-sinks",
			want: [4]any{false, true, false, true},
		},
	}
	sources := [4]Source{SourceDefault, SourceFile, SourceEnv, SourceFlag}

	for _, tt := range tests {
		for top, source := range sources {
			t.Run(fmt.Sprintf("%s/%s", tt.env, source), func(t *testing.T) {
				t.Parallel()
				opts := LoadOptions{Flags: testFlags(t), LookupEnv: envOf(nil)}
				if top >= 1 {
					opts.ConfigFile = writeConfigFile(t, tt.file+"\n")
				}
				if top >= 2 {
					opts.LookupEnv = envOf(map[string]string{tt.env: tt.envV})
				}
				args := []string{}
				if top >= 3 {
					args = append(args, tt.flag)
				}
				if err := opts.Flags.Parse(args); err != nil {
					t.Fatal(err)
				}

				cfg := mustLoad(t, opts)
				if got := tt.get(cfg); !reflect.DeepEqual(got, tt.want[top]) {
					t.Errorf("value = %#v, want %#v", got, tt.want[top])
				}
				if got := shown(t, cfg, tt.env).Source; got != source {
					t.Errorf("source = %q, want %q", got, source)
				}
			})
		}
	}
}

// An unchanged flag must not beat lower layers, whatever its own default.
func TestLoadIgnoresUnchangedFlagDefaults(t *testing.T) {
	t.Parallel()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.String("role", "delivery", "")
	if err := BindFlag(fs, "role", "STREAMING_HUB_ROLE"); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	cfg := mustLoad(t, LoadOptions{Flags: fs, LookupEnv: envOf(map[string]string{"STREAMING_HUB_ROLE": "ingest"})})
	if cfg.Role != RoleIngest {
		t.Errorf("Role = %q, want ingest from the environment", cfg.Role)
	}
}

func TestLoadFileValueForms(t *testing.T) {
	t.Parallel()
	path := writeConfigFile(t, strings.Join([]string{
		`kafka_brokers: "a:9092, b:9092"`,
		`dispatch_workers: 12`,
		`pull_rate: 0.5`,
		`metrics_enabled: false`,
		`DISPATCH_CLAIM_BATCH: 32`, // keys are case-insensitive
		`kafka_topics_exclude: ""`,
		`admin_token:`, // null leaves the lower layer in force
		`roster_refresh: " 2s "`,
		`http_listen_addr: :9090`,
	}, "\n"))
	cfg := mustLoad(t, LoadOptions{ConfigFile: path})

	if want := []string{"a:9092", "b:9092"}; !slices.Equal(cfg.Kafka.Brokers, want) {
		t.Errorf("Brokers = %q, want %q", cfg.Kafka.Brokers, want)
	}
	if cfg.Dispatch.Workers != 12 || cfg.Pull.Rate != 0.5 || cfg.MetricsEnabled || cfg.Dispatch.ClaimBatch != 32 {
		t.Errorf("Workers=%d Rate=%v MetricsEnabled=%v ClaimBatch=%d, want 12 0.5 false 32",
			cfg.Dispatch.Workers, cfg.Pull.Rate, cfg.MetricsEnabled, cfg.Dispatch.ClaimBatch)
	}
	if cfg.Kafka.TopicsExclude != nil {
		t.Errorf("TopicsExclude = %v, want none", cfg.Kafka.TopicsExclude)
	}
	if cfg.HTTPListenAddr != ":9090" {
		t.Errorf("HTTPListenAddr = %q, want :9090", cfg.HTTPListenAddr)
	}
	if cfg.Ingest.RosterRefresh != 2*time.Second {
		t.Errorf("RosterRefresh = %v, want 2s", cfg.Ingest.RosterRefresh)
	}
	if entry := shown(t, cfg, "STREAMING_HUB_ADMIN_TOKEN"); entry.Source != SourceDefault {
		t.Errorf("null admin_token source = %q, want default", entry.Source)
	}
	if entry := shown(t, cfg, "STREAMING_HUB_KAFKA_BROKERS"); entry.Value != "a:9092, b:9092" || entry.Source != SourceFile {
		t.Errorf("brokers shown as %+v", entry)
	}
}

func TestLoadTrimsWhitespace(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, LoadOptions{LookupEnv: envOf(map[string]string{
		"STREAMING_HUB_DISPATCH_WORKERS": "  12 \n",
		"STREAMING_HUB_KAFKA_BROKERS":    " a:9092 , b:9092 ,",
		"STREAMING_HUB_LOG_LEVEL":        "\tDEBUG\n",
		"STREAMING_HUB_ADMIN_TOKEN":      "0123456789abcdef\n",
		"STREAMING_HUB_BREAKER_COOLDOWN": " 45s ",
	})})
	if cfg.Dispatch.Workers != 12 {
		t.Errorf("Workers = %d, want 12", cfg.Dispatch.Workers)
	}
	if want := []string{"a:9092", "b:9092"}; !slices.Equal(cfg.Kafka.Brokers, want) {
		t.Errorf("Brokers = %q, want %q", cfg.Kafka.Brokers, want)
	}
	if cfg.LogLevel.String() != "DEBUG" {
		t.Errorf("LogLevel = %v, want DEBUG", cfg.LogLevel)
	}
	if cfg.AdminToken != "0123456789abcdef" {
		t.Errorf("AdminToken = %q, want it without the trailing newline", cfg.AdminToken)
	}
	if cfg.Breaker.Cooldown != 45*time.Second {
		t.Errorf("Cooldown = %v, want 45s", cfg.Breaker.Cooldown)
	}
}

// A variable that is set counts even when empty: that is how an operator
// clears a default such as the topic exclusion.
func TestLoadEmptyEnvironmentValueIsSet(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, LoadOptions{LookupEnv: envOf(map[string]string{"STREAMING_HUB_KAFKA_TOPICS_EXCLUDE": ""})})
	if cfg.Kafka.TopicsExclude != nil {
		t.Errorf("TopicsExclude = %v, want none", cfg.Kafka.TopicsExclude)
	}
	if entry := shown(t, cfg, "STREAMING_HUB_KAFKA_TOPICS_EXCLUDE"); entry.Source != SourceEnv || entry.Value != "" {
		t.Errorf("shown as %+v, want empty from env", entry)
	}
}

func TestLoadCallerDefaults(t *testing.T) {
	t.Parallel()
	local := map[string]string{
		"STREAMING_HUB_ENV":                 "local",
		"STREAMING_HUB_ALLOW_PRIVATE_SINKS": "true",
	}
	cfg := mustLoad(t, LoadOptions{Defaults: local})
	if cfg.Environment != EnvironmentLocal || !cfg.AllowPrivateSinks {
		t.Errorf("Environment=%q AllowPrivateSinks=%v, want the caller's defaults", cfg.Environment, cfg.AllowPrivateSinks)
	}
	if entry := shown(t, cfg, "STREAMING_HUB_ENV"); entry.Source != SourceDefault {
		t.Errorf("source = %q, want default", entry.Source)
	}

	cfg = mustLoad(t, LoadOptions{Defaults: local, LookupEnv: envOf(map[string]string{"STREAMING_HUB_ENV": "staging"})})
	if cfg.Environment != EnvironmentStaging {
		t.Errorf("Environment = %q, want the environment to beat a caller default", cfg.Environment)
	}

	_, err := Load(LoadOptions{Defaults: map[string]string{"STREAMING_HUB_NOPE": "x"}, LookupEnv: envOf(nil)})
	var validation *ValidationError
	if err == nil || errors.As(err, &validation) || !strings.Contains(err.Error(), "STREAMING_HUB_NOPE") {
		t.Errorf("unknown caller default: err = %v, want a plain error naming it", err)
	}
}

func TestLoadConfigFileProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string // written to a file unless path is set
		path    string
		want    []string // %s is replaced by the file's path
	}{
		{
			name: "missing file",
			path: dir + "/absent.yaml",
			want: []string{`invalid --config="%s": file does not exist`},
		},
		{
			name: "directory",
			path: dir,
			want: []string{`invalid --config="%s": cannot read the file: is a directory`},
		},
		{
			name:    "not YAML",
			content: "dispatch_workers: [1\n",
			want:    []string{`invalid --config="%s": not valid YAML: line 1: did not find expected ',' or ']'`},
		},
		{
			name:    "not a mapping",
			content: "- a\n- b\n",
			want:    []string{`invalid --config="%s": not valid YAML: unmarshal errors:; line 1: cannot unmarshal !!seq into map[string]interface {}`},
		},
		{
			name:    "typo",
			content: "dispatch_worker: 8\n",
			want:    []string{`invalid --config="%s": unknown key "dispatch_worker"; did you mean "dispatch_workers"?`},
		},
		{
			name:    "nested",
			content: "kafka:\n  brokers: a:9092\n",
			want:    []string{`invalid --config="%s": unknown key "kafka.brokers"; did you mean "kafka_brokers"?`},
		},
		{
			name:    "env prefix",
			content: "streaming_hub_role: ingest\n",
			want:    []string{`invalid --config="%s": unknown key "streaming_hub_role"; did you mean "role"?`},
		},
		{
			name:    "unrelated and sorted",
			content: "zebra: 1\ncolour: blue\n",
			want: []string{
				`invalid --config="%s": unknown key "colour"`,
				`invalid --config="%s": unknown key "zebra"`,
			},
		},
		{
			name:    "unknown key beside a bad value",
			content: "colour: blue\ndispatch_workers: many\n",
			want: []string{
				`invalid --config="%s": unknown key "colour"`,
				`invalid STREAMING_HUB_DISPATCH_WORKERS="many": must be an integer from 1 to 1024`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := tt.path
			if path == "" {
				path = writeConfigFile(t, tt.content)
			}
			got := problemLines(t, LoadOptions{ConfigFile: path})
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = strings.ReplaceAll(w, "%s", path)
			}
			if !slices.Equal(got, want) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestBindFlagErrors(t *testing.T) {
	t.Parallel()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.String("database-url", "", "")
	fs.String("dsn", "", "")
	if err := BindFlag(fs, "database-url", "STREAMING_HUB_POSTGRES_DSN"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		flag, env, want string
	}{
		{"missing", "STREAMING_HUB_ROLE", "no flag --missing"},
		{"dsn", "STREAMING_HUB_NOPE", "no setting STREAMING_HUB_NOPE"},
		{"dsn", "STREAMING_HUB_POSTGRES_DSN", "--database-url already sets STREAMING_HUB_POSTGRES_DSN"},
	}
	for _, tt := range tests {
		err := BindFlag(fs, tt.flag, tt.env)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("BindFlag(%s, %s) = %v, want an error containing %q", tt.flag, tt.env, err, tt.want)
		}
	}
	if err := BindFlag(fs, "database-url", "STREAMING_HUB_POSTGRES_DSN"); err != nil {
		t.Errorf("rebinding the same flag: %v", err)
	}
}

// cobra copies a parent's persistent flags into each subcommand's flag set;
// the binding must travel with them.
func TestBoundFlagSurvivesMerging(t *testing.T) {
	t.Parallel()
	persistent := pflag.NewFlagSet("root", pflag.ContinueOnError)
	persistent.String("log-level", "", "")
	if err := BindFlag(persistent, "log-level", "STREAMING_HUB_LOG_LEVEL"); err != nil {
		t.Fatal(err)
	}
	sub := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	sub.AddFlagSet(persistent)
	if err := sub.Parse([]string{"--log-level=error"}); err != nil {
		t.Fatal(err)
	}
	if cfg := mustLoad(t, LoadOptions{Flags: sub}); cfg.LogLevel.String() != "ERROR" {
		t.Errorf("LogLevel = %v, want ERROR from the merged flag", cfg.LogLevel)
	}
}

func TestTwoFlagsForOneSetting(t *testing.T) {
	t.Parallel()
	root := pflag.NewFlagSet("root", pflag.ContinueOnError)
	root.String("database-url", "", "")
	local := pflag.NewFlagSet("local", pflag.ContinueOnError)
	local.String("dsn", "", "")
	if err := BindFlag(root, "database-url", "STREAMING_HUB_POSTGRES_DSN"); err != nil {
		t.Fatal(err)
	}
	if err := BindFlag(local, "dsn", "STREAMING_HUB_POSTGRES_DSN"); err != nil {
		t.Fatal(err)
	}
	local.AddFlagSet(root)
	if err := local.Parse([]string{"--dsn=postgres://u:pw1@h/db", "--database-url=postgres://u:pw2@h/db"}); err != nil {
		t.Fatal(err)
	}
	got := problemLines(t, LoadOptions{Flags: local})
	want := []string{`invalid STREAMING_HUB_POSTGRES_DSN="postgres://u:****@h/db": set by both --database-url and --dsn; give only one`}
	if !slices.Equal(got, want) {
		t.Errorf("problems = %q, want %q", got, want)
	}
}
