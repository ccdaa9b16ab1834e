package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// envOf is a LookupEnv over a fixed map, so tests never read or change the
// process environment and can run in parallel.
func envOf(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		value, ok := vars[name]
		return value, ok
	}
}

// writeConfigFile writes a YAML config file into a fresh temp dir.
func writeConfigFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hub.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// mustLoad loads with opts and fails the test on any error.
func mustLoad(t *testing.T, opts LoadOptions) *Config {
	t.Helper()
	if opts.LookupEnv == nil {
		opts.LookupEnv = envOf(nil)
	}
	cfg, err := Load(opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg
}

// problemLines loads with opts and returns the lines of the expected
// *ValidationError.
func problemLines(t *testing.T, opts LoadOptions) []string {
	t.Helper()
	if opts.LookupEnv == nil {
		opts.LookupEnv = envOf(nil)
	}
	_, err := Load(opts)
	var validation *ValidationError
	if !errors.As(err, &validation) {
		t.Fatalf("Load error = %v, want a *ValidationError", err)
	}
	lines := make([]string, len(validation.Problems))
	for i, p := range validation.Problems {
		lines[i] = p.String()
	}
	return lines
}

// shown returns the Show entry of one setting.
func shown(t *testing.T, cfg *Config, env string) ShowEntry {
	t.Helper()
	for _, entry := range cfg.Show() {
		if entry.Setting == env {
			return entry
		}
	}
	t.Fatalf("Show has no entry for %s", env)
	return ShowEntry{}
}
