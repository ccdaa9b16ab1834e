package config

import (
	"slices"
	"testing"
)

func TestUnknownEnvWarnings(t *testing.T) {
	got := UnknownEnvWarnings([]string{
		"PATH=/bin",
		"STREAMING_HUB_DISPATCH_WORKERS=8",         // a setting
		"STREAMING_HUB_DISPATCH_WORKER=8",          // a typo
		"STREAMING_HUB_LOGLEVEL=debug",             // a typo
		"STREAMING_HUB_TEST_POSTGRES_DSN=x",        // the tests' own
		"STREAMING_HUB_KEK_REF=STREAMING_HUB_KEK1", // names the next one
		"STREAMING_HUB_KEK1=k1:secret",
		"STREAMING_HUB_SOMETHING_ELSE_ENTIRELY=1", // unknown, nothing near it
		"STREAMING_HUB_DISPATCH_WORKER=9",         // repeated: reported once
	})
	want := []string{
		"STREAMING_HUB_DISPATCH_WORKER is set but is not a hubctl setting; did you mean STREAMING_HUB_DISPATCH_WORKERS?",
		"STREAMING_HUB_LOGLEVEL is set but is not a hubctl setting; did you mean STREAMING_HUB_LOG_LEVEL?",
		"STREAMING_HUB_SOMETHING_ELSE_ENTIRELY is set but is not a hubctl setting",
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings:\n%q\nwant:\n%q", got, want)
	}
	if got := UnknownEnvWarnings(nil); got != nil {
		t.Errorf("no environment: %q", got)
	}
}
