package config

import (
	"slices"
	"strings"
)

// testEnvPrefix starts variables the test suites read; they are not hub
// settings and never mistakes.
const testEnvPrefix = EnvPrefix + "TEST_"

// UnknownEnvWarnings names the STREAMING_HUB_* variables of environ (as
// os.Environ gives it) that no setting reads, with the setting each
// probably meant: a mistyped variable would otherwise leave the default
// in force without a word, where a mistyped file key stops start-up. They
// are warnings, not errors: the environment is shared with other tools and
// older scripts, and a stray variable breaks nothing. The variable that
// STREAMING_HUB_KEK_REF names holds the key and is read, so it is never
// reported.
func UnknownEnvWarnings(environ []string) []string {
	known := map[string]bool{}
	for _, s := range registry {
		known[s.Env] = true
	}
	var names []string
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if name == EnvPrefix+"KEK_REF" && value != "" {
			known[value] = true
		}
		if strings.HasPrefix(name, EnvPrefix) && !strings.HasPrefix(name, testEnvPrefix) {
			names = append(names, name)
		}
	}
	var warnings []string
	for _, name := range slices.Compact(slices.Sorted(slices.Values(names))) {
		if known[name] {
			continue
		}
		warning := name + " is set but is not a hubctl setting"
		if suggestion, ok := suggestKey(strings.ToLower(name)); ok {
			warning += "; did you mean " + EnvPrefix + strings.ToUpper(suggestion) + "?"
		}
		warnings = append(warnings, warning)
	}
	return warnings
}
