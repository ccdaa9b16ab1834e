package events

import (
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
)

func TestChooseBrokers(t *testing.T) {
	configured := []string{"kafka:9092"}
	fromDev := hubaccess.Target{Context: "dev", Brokers: []string{"127.0.0.1:19092"}}
	for _, tc := range []struct {
		name    string
		named   bool
		target  hubaccess.Target
		want    string
		wantErr string
	}{
		{"flag, env or file win over the context", true, fromDev, "kafka:9092", ""},
		{"the context's when none is named", false, fromDev, "127.0.0.1:19092", ""},
		{"named without any context", true, hubaccess.Target{}, "kafka:9092", ""},
		{"a context without brokers", false, hubaccess.Target{Context: "prod"}, "", `pass --brokers (or set STREAMING_HUB_KAFKA_BROKERS); context "prod" stores none`},
		{"no context at all", false, hubaccess.Target{}, "", "pass --brokers (or set STREAMING_HUB_KAFKA_BROKERS), or run hubctl dev"},
	} {
		got, err := chooseBrokers(configured, tc.named, tc.target)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || cmdutil.ExitCode(err) != cmdutil.ExitUsage {
				t.Errorf("%s: %v, %v (exit %d); want exit 2 with %q", tc.name, got, err, cmdutil.ExitCode(err), tc.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("%s: %v, %v; want %s", tc.name, got, err, tc.want)
		}
	}
}

func TestChooseTenant(t *testing.T) {
	fromDev := hubaccess.Target{Context: "dev", Tenant: "default"}
	for _, tc := range []struct {
		name    string
		given   string
		target  hubaccess.Target
		want    string
		wantErr string
	}{
		{"--tenant or HUBCTL_TENANT win over the context", "acme", fromDev, "acme", ""},
		{"the context's when none is given", "", fromDev, "default", ""},
		{"a context without a tenant", "", hubaccess.Target{Context: "prod"}, "", `missing --tenant (or HUBCTL_TENANT): context "prod" names no tenant`},
		{"no context at all", "", hubaccess.Target{}, "", "missing --tenant (or HUBCTL_TENANT)"},
	} {
		got, err := chooseTenant(tc.given, tc.target)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || cmdutil.ExitCode(err) != cmdutil.ExitUsage {
				t.Errorf("%s: %q, %v (exit %d); want exit 2 with %q", tc.name, got, err, cmdutil.ExitCode(err), tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}
