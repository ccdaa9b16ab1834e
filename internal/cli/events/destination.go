package events

import (
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/hubaccess"
	"github.com/hubctl/hubctl/internal/config"
)

// envBrokers is the hub's setting that --brokers overrides.
const envBrokers = "STREAMING_HUB_KAFKA_BROKERS"

// KafkaConfig is the hub's configuration with the brokers to publish to:
// --brokers, STREAMING_HUB_KAFKA_BROKERS or the configuration file, else
// those of the active context (hubctl dev stores its own), else a usage
// error naming --brokers. The built-in default is never used: a broker
// nobody named is a guess, and a wrong guess costs a ping timeout.
func KafkaConfig(f *cmdutil.Factory) (*config.Config, error) {
	cfg, _, err := resolveKafka(f, false)
	return cfg, err
}

// resolveKafka is KafkaConfig, and with wantTenant also the tenant to
// publish as: --tenant, HUBCTL_TENANT, else the active context's.
func resolveKafka(f *cmdutil.Factory, wantTenant bool) (*config.Config, string, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, "", err
	}
	named := brokersNamed(cfg)
	tenant := ""
	if wantTenant {
		tenant = f.FlagOrEnv(hubaccess.FlagTenant, hubaccess.EnvTenant)
	}
	// The profile is read only when something is missing, so a command
	// that names everything works whatever state the profile file is in.
	var target hubaccess.Target
	if !named || (wantTenant && tenant == "") {
		if target, err = hubaccess.Resolve(f); err != nil {
			return nil, "", err
		}
	}
	brokers, err := chooseBrokers(cfg.Kafka.Brokers, named, target)
	if err != nil {
		return nil, "", err
	}
	if wantTenant {
		if tenant, err = chooseTenant(tenant, target); err != nil {
			return nil, "", err
		}
	}
	c := *cfg
	c.Kafka.Brokers = brokers
	return &c, tenant, nil
}

// brokersNamed reports whether the brokers were set by a flag, the
// environment or the configuration file rather than left at the built-in
// default.
func brokersNamed(cfg *config.Config) bool {
	for _, entry := range cfg.Show() {
		if entry.Setting == envBrokers {
			return entry.Source != config.SourceDefault
		}
	}
	return false
}

// chooseBrokers picks the brokers to publish to: the configured ones when
// named is true, else those of the context target came from.
func chooseBrokers(configured []string, named bool, target hubaccess.Target) ([]string, error) {
	switch {
	case named:
		return configured, nil
	case len(target.Brokers) > 0:
		return target.Brokers, nil
	case target.Context != "":
		return nil, cmdutil.UsageErrorf("no Kafka brokers: pass --brokers (or set %s); context %q stores none", envBrokers, target.Context)
	}
	return nil, cmdutil.UsageErrorf("no Kafka brokers: pass --brokers (or set %s), or run hubctl dev, whose context stores its own", envBrokers)
}

// chooseTenant picks the tenant to publish as: given (--tenant or
// HUBCTL_TENANT) when set, else the tenant of the context target came
// from.
func chooseTenant(given string, target hubaccess.Target) (string, error) {
	switch {
	case given != "":
		return given, nil
	case target.Tenant != "":
		return target.Tenant, nil
	case target.Context != "":
		return "", cmdutil.UsageErrorf("missing --tenant (or %s): context %q names no tenant", hubaccess.EnvTenant, target.Context)
	}
	return "", cmdutil.UsageErrorf("missing --tenant (or %s)", hubaccess.EnvTenant)
}

// BrokersUsage is the help of --brokers, which every publishing command
// shares.
const BrokersUsage = "Kafka bootstrap brokers, host:port (" + envBrokers + "; default: the context's, which hubctl dev stores)"

// tenantUsage is the help of --tenant of the publishing commands.
const tenantUsage = "tenant id (ce-tenantid; " + hubaccess.EnvTenant + "; default: the context's, which hubctl dev stores)"
