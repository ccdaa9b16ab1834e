package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Source says which layer a setting's effective value came from.
type Source string

// The layers, from lowest to highest precedence.
const (
	SourceDefault Source = "default"
	SourceFile    Source = "file"
	SourceEnv     Source = "env"
	SourceFlag    Source = "flag"
)

// LoadOptions are the inputs of Load. The zero value loads the built-in
// defaults overlaid with the process environment.
type LoadOptions struct {
	// ConfigFile is the path given with --config; empty means no file.
	ConfigFile string
	// Flags is the parsed command line. Only flags bound with BindFlag and
	// changed on the command line count; a flag's own default never does,
	// because the registry is the one place defaults live.
	Flags *pflag.FlagSet
	// LookupEnv reads an environment variable; nil means os.LookupEnv.
	LookupEnv func(name string) (string, bool)
	// Defaults replaces built-in defaults, keyed by environment variable
	// name, for commands whose natural defaults differ (hubctl dev runs
	// with STREAMING_HUB_ENV=local). Every other layer still beats them.
	Defaults map[string]string
}

// flagAnnotation marks a flag with the environment variable name of the
// setting it overrides. Annotations travel with the *pflag.Flag, so a
// binding made on a persistent flag survives cobra merging it into a
// subcommand's flag set.
const flagAnnotation = "hubctl/config-setting"

// BindFlag makes the flag flagName of fs override the setting whose
// environment variable is env (e.g. "STREAMING_HUB_ROLE") when the flag is
// given on the command line.
func BindFlag(fs *pflag.FlagSet, flagName, env string) error {
	flag := fs.Lookup(flagName)
	if flag == nil {
		return fmt.Errorf("config: no flag --%s to bind to %s", flagName, env)
	}
	if _, ok := lookupSetting(env); !ok {
		return fmt.Errorf("config: cannot bind --%s: no setting %s", flagName, env)
	}
	var clash string
	fs.VisitAll(func(other *pflag.Flag) {
		if bound, ok := boundSetting(other); ok && bound == env && other != flag {
			clash = other.Name
		}
	})
	if clash != "" {
		return fmt.Errorf("config: cannot bind --%s: --%s already sets %s", flagName, clash, env)
	}
	return fs.SetAnnotation(flagName, flagAnnotation, []string{env})
}

func boundSetting(f *pflag.Flag) (env string, ok bool) {
	names := f.Annotations[flagAnnotation]
	if len(names) != 1 {
		return "", false
	}
	return names[0], true
}

// Load resolves every setting from, highest first: changed flags, the
// environment, the config file and the defaults. It returns a
// *ValidationError listing every bad value; other errors are programming
// mistakes in opts.
func Load(opts LoadOptions) (*Config, error) {
	lookupEnv := opts.LookupEnv
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	defaults, err := effectiveDefaults(opts.Defaults)
	if err != nil {
		return nil, err
	}
	flags, problems := changedFlags(opts.Flags)

	v := viper.New()
	if opts.ConfigFile != "" {
		if problem, ok := readConfigFile(v, opts.ConfigFile); !ok {
			// Without the file's values, judging the rest would report
			// problems the file may well resolve.
			return nil, &ValidationError{Problems: []Problem{problem}}
		}
		// Before any default is set, viper's keys are the file's keys.
		problems = append(problems, unknownKeyProblems(opts.ConfigFile, v.AllKeys())...)
	}

	cfg := &Config{resolved: make([]resolvedValue, 0, len(registry))}
	for _, s := range registry {
		v.SetDefault(s.Key, defaults[s.Env])
		source := SourceDefault
		if v.InConfig(s.Key) {
			source = SourceFile
		}
		// viper's own env layer reads the process environment and its flag
		// layer sits below Set, so the two upper layers are applied here,
		// lowest first, which also tells which layer won.
		if value, ok := lookupEnv(s.Env); ok {
			v.Set(s.Key, value)
			source = SourceEnv
		}
		if value, ok := flags[s.Env]; ok {
			v.Set(s.Key, value)
			source = SourceFlag
		}

		raw := valueText(v.Get(s.Key))
		cfg.resolved = append(cfg.resolved, resolvedValue{setting: s, text: raw, source: source})
		if err := s.codec.decode(cfg, raw); err != nil {
			problems = append(problems, s.problem(raw, err))
		}
	}
	problems = append(problems, crossSettingProblems(cfg)...)

	if len(problems) > 0 {
		return nil, &ValidationError{Problems: problems}
	}
	return cfg, nil
}

func effectiveDefaults(overrides map[string]string) (map[string]string, error) {
	defaults := make(map[string]string, len(registry))
	for _, s := range registry {
		defaults[s.Env] = s.Default
	}
	for _, env := range slices.Sorted(maps.Keys(overrides)) {
		if _, ok := defaults[env]; !ok {
			return nil, fmt.Errorf("config: LoadOptions.Defaults names unknown setting %s", env)
		}
		defaults[env] = overrides[env]
	}
	return defaults, nil
}

// changedFlags returns the text of each changed bound flag by setting. Two
// changed flags for one setting (possible when cobra merges a parent's
// persistent flag with a local one) are a usage problem, not a silent pick.
func changedFlags(fs *pflag.FlagSet) (map[string]string, []Problem) {
	values := map[string]string{}
	if fs == nil {
		return values, nil
	}
	setBy := map[string]string{}
	var problems []Problem
	fs.VisitAll(func(f *pflag.Flag) {
		env, bound := boundSetting(f)
		if !bound || !f.Changed {
			return
		}
		s, known := lookupSetting(env)
		if !known {
			return // BindFlag refuses unknown settings; a hand-made annotation is ignored.
		}
		value := flagText(f)
		if other, twice := setBy[env]; twice {
			problems = append(problems, Problem{
				Setting: env,
				Value:   s.Mask(value),
				Reason:  fmt.Sprintf("set by both --%s and --%s; give only one", other, f.Name),
			})
			return
		}
		setBy[env] = f.Name
		values[env] = value
	})
	return values, problems
}

// flagText renders a flag's value as the same text an environment variable
// would carry; slice flags join with commas like list settings do.
func flagText(f *pflag.Flag) string {
	if slice, ok := f.Value.(pflag.SliceValue); ok {
		return strings.Join(slice.GetSlice(), ",")
	}
	return f.Value.String()
}

// valueText turns any layer's value into the text codecs parse. Env and
// flag values arrive as text; YAML brings ints, floats, bools and lists.
// Surrounding whitespace is dropped everywhere: it is never meaningful in
// these settings and is a frequent paste or Secret-file artefact.
func valueText(value any) string {
	switch v := value.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case []any:
		items := make([]string, len(v))
		for i, item := range v {
			items[i] = valueText(item)
		}
		return strings.Join(items, ",")
	case []string:
		items := make([]string, len(v))
		for i, item := range v {
			items[i] = strings.TrimSpace(item)
		}
		return strings.Join(items, ",")
	default:
		return strings.TrimSpace(fmt.Sprint(v))
	}
}

func (s Setting) problem(raw string, err error) Problem {
	reason := s.codec.reason(err)
	if s.Secret {
		// A decode detail may quote the value; for a secret that would leak it.
		reason = "must be " + s.codec.allowed
	}
	return Problem{Setting: s.Env, Value: s.Mask(raw), Reason: reason}
}

// crossSettingProblems checks rules that span settings. It runs after every
// setting decoded, on fields left at zero where decoding failed, so it only
// judges values that were themselves valid.
func crossSettingProblems(c *Config) []Problem {
	problems := inFlightCapProblems(c.Dispatch)
	if topic := c.Kafka.OperationalTopic; topic != "" && c.Kafka.WantsTopic(topic) {
		// The hub would read its own operational events back as a
		// tenant's events (and quarantine or store them twice).
		problems = append(problems, Problem{Setting: EnvPrefix + "OPERATIONAL_TOPIC", Value: topic,
			Reason: "the hub consumes this topic itself: it matches " + EnvPrefix + "KAFKA_TOPICS and not " + EnvPrefix + "KAFKA_TOPICS_EXCLUDE; pick a topic outside them"})
	}
	problems = append(problems, pairProblems("HTTP_TLS_CERT_FILE", c.HTTPTLSCertFile, "HTTP_TLS_KEY_FILE", c.HTTPTLSKeyFile)...)
	return append(problems, kafkaSecurityProblems(c)...)
}

// pairProblems requires two settings that only work together to be set
// together.
func pairProblems(nameA, a, nameB, b string) []Problem {
	if (a == "") == (b == "") {
		return nil
	}
	missing, other := nameB, nameA
	if a == "" {
		missing, other = nameA, nameB
	}
	return []Problem{{Setting: EnvPrefix + missing, Reason: "required when " + EnvPrefix + other + " is set"}}
}

// kafkaSecurityProblems settles how ingest connects: the revision-1 SCRAM
// settings become the SASL ones, TLS files imply TLS, and each mechanism
// has what it needs.
func kafkaSecurityProblems(c *Config) []Problem {
	var problems []Problem
	k := &c.Kafka
	mechanismSetting := EnvPrefix + "KAFKA_SASL_MECHANISM"
	userSetting, passwordSetting := EnvPrefix+"KAFKA_SASL_USERNAME", EnvPrefix+"KAFKA_SASL_PASSWORD"
	if c.scram.Mechanism != SASLNone {
		if k.SASLMechanism != SASLNone {
			return append(problems, Problem{Setting: EnvPrefix + "KAFKA_SCRAM_MECHANISM", Value: string(c.scram.Mechanism),
				Reason: "is deprecated and must be empty when " + EnvPrefix + "KAFKA_SASL_MECHANISM is set"})
		}
		k.SASLMechanism, k.SASLUsername, k.SASLPassword = c.scram.Mechanism, c.scram.Username, c.scram.Password
		mechanismSetting = EnvPrefix + "KAFKA_SCRAM_MECHANISM"
		userSetting, passwordSetting = EnvPrefix+"KAFKA_SCRAM_USERNAME", EnvPrefix+"KAFKA_SCRAM_PASSWORD"
		c.Deprecations = append(c.Deprecations, EnvPrefix+"KAFKA_SCRAM_MECHANISM, _USERNAME and _PASSWORD are deprecated: use "+
			EnvPrefix+"KAFKA_SASL_MECHANISM, _USERNAME and _PASSWORD")
	}
	if k.TLSCAFile != "" || k.TLSCertFile != "" || k.TLSKeyFile != "" {
		k.TLSEnabled = true
	}
	problems = append(problems, pairProblems("KAFKA_TLS_CERT_FILE", k.TLSCertFile, "KAFKA_TLS_KEY_FILE", k.TLSKeyFile)...)
	required := func(setting, value string) {
		if value == "" {
			problems = append(problems, Problem{Setting: setting,
				Reason: "required when " + mechanismSetting + " is " + string(k.SASLMechanism)})
		}
	}
	switch {
	case k.SASLMechanism.UsesPassword():
		required(userSetting, k.SASLUsername)
		required(passwordSetting, k.SASLPassword)
	case k.SASLMechanism == SASLOAuthBearer:
		required(EnvPrefix+"KAFKA_OAUTH_TOKEN_URL", k.OAuth.TokenURL)
		required(EnvPrefix+"KAFKA_OAUTH_CLIENT_ID", k.OAuth.ClientID)
		required(EnvPrefix+"KAFKA_OAUTH_CLIENT_SECRET", k.OAuth.ClientSecret)
	}
	return problems
}

// inFlightCapProblems rejects an in-flight cap above the one it lives
// within: a destination's attempts are some of its tenant's, a tenant's
// some of the process's. Such a cap could never be reached, and its
// setting would say something untrue.
func inFlightCapProblems(d DispatchConfig) []Problem {
	var problems []Problem
	if d.TenantMaxInFlight > 0 && d.MaxInFlight > 0 && d.TenantMaxInFlight > d.MaxInFlight {
		problems = append(problems, Problem{Setting: EnvPrefix + "DISPATCH_TENANT_MAX_IN_FLIGHT", Value: strconv.Itoa(d.TenantMaxInFlight),
			Reason: "must be at most " + EnvPrefix + "DISPATCH_MAX_IN_FLIGHT (" + strconv.Itoa(d.MaxInFlight) + ")"})
	}
	if d.DestinationMaxInFlight > 0 && d.TenantMaxInFlight > 0 && d.DestinationMaxInFlight > d.TenantMaxInFlight {
		problems = append(problems, Problem{Setting: EnvPrefix + "DISPATCH_DESTINATION_MAX_IN_FLIGHT", Value: strconv.Itoa(d.DestinationMaxInFlight),
			Reason: "must be at most " + EnvPrefix + "DISPATCH_TENANT_MAX_IN_FLIGHT (" + strconv.Itoa(d.TenantMaxInFlight) + ")"})
	}
	return problems
}

// readConfigFile loads the YAML file into v, or explains in one problem why
// it cannot.
func readConfigFile(v *viper.Viper, path string) (Problem, bool) {
	v.SetConfigFile(path)
	// The file is YAML, whatever it is called (docs/configuration.md).
	v.SetConfigType("yaml")
	err := v.ReadInConfig()
	if err == nil {
		return Problem{}, true
	}
	problem := Problem{Setting: ConfigFileFlag, Value: path}
	var pathErr *fs.PathError
	var parseErr viper.ConfigParseError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		problem.Reason = "file does not exist"
	case errors.As(err, &pathErr):
		problem.Reason = "cannot read the file: " + pathErr.Err.Error()
	case errors.As(err, &parseErr):
		problem.Reason = "not valid YAML: " + strings.TrimPrefix(parseErr.Unwrap().Error(), "yaml: ")
	default:
		problem.Reason = "cannot load the file: " + err.Error()
	}
	return problem, false
}

// unknownKeyProblems rejects keys no setting has: a typo would otherwise
// silently leave the default in force.
func unknownKeyProblems(path string, keys []string) []Problem {
	var problems []Problem
	for _, key := range slices.Sorted(slices.Values(keys)) {
		if slices.ContainsFunc(registry, func(s Setting) bool { return s.Key == key }) {
			continue
		}
		reason := "unknown key " + strconv.Quote(key)
		if suggestion, ok := suggestKey(key); ok {
			reason += "; did you mean " + strconv.Quote(suggestion) + "?"
		}
		problems = append(problems, Problem{Setting: ConfigFileFlag, Value: path, Reason: reason})
	}
	return problems
}

// suggestKey guesses the key an unknown one meant: the same name nested
// (kafka: {brokers: …}) or written with the env prefix, or a near miss.
func suggestKey(unknown string) (string, bool) {
	flat := strings.TrimPrefix(strings.ReplaceAll(unknown, ".", "_"), strings.ToLower(EnvPrefix))
	best, bestDistance := "", 3 // farther than 2 edits is a guess, not a typo
	for _, s := range registry {
		if s.Key == flat {
			return s.Key, true
		}
		if d := editDistance(flat, s.Key); d < bestDistance {
			best, bestDistance = s.Key, d
		}
	}
	return best, best != ""
}

// editDistance is the Levenshtein distance between a and b, in bytes:
// keys are ASCII.
func editDistance(a, b string) int {
	previous := make([]int, len(b)+1)
	current := make([]int, len(b)+1)
	for j := range previous {
		previous[j] = j
	}
	for i := 1; i <= len(a); i++ {
		current[0] = i
		for j := 1; j <= len(b); j++ {
			substitution := previous[j-1]
			if a[i-1] != b[j-1] {
				substitution++
			}
			current[j] = min(previous[j]+1, current[j-1]+1, substitution)
		}
		previous, current = current, previous
	}
	return previous[len(b)]
}
