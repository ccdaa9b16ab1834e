package cmdutil_test

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
)

// TestDeprecatedSettingsWarnOnce: a setting that still works but is
// deprecated is said once per invocation, even when the configuration is
// resolved again for another command's flags.
func TestDeprecatedSettingsWarnOnce(t *testing.T) {
	f, _, _, stderr := cmdtest.Factory(map[string]string{
		"STREAMING_HUB_KAFKA_SCRAM_MECHANISM": "SCRAM-SHA-256",
		"STREAMING_HUB_KAFKA_SCRAM_USERNAME":  "hub",
		"STREAMING_HUB_KAFKA_SCRAM_PASSWORD":  "pw",
	})
	for range 2 {
		cfg, err := f.Config()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Kafka.SASLMechanism != "SCRAM-SHA-256" {
			t.Fatalf("SASL mechanism %q, want the deprecated setting's", cfg.Kafka.SASLMechanism)
		}
		f.UseFlags(pflag.NewFlagSet("again", pflag.ContinueOnError), "")
	}
	if got := strings.Count(stderr.String(), "warning: STREAMING_HUB_KAFKA_SCRAM_MECHANISM"); got != 1 {
		t.Fatalf("warned %d times, want once:\n%s", got, stderr.String())
	}
}
