// Package cmdutil holds what every command shares: the Factory that hands
// out I/O, configuration and the store lazily (a command that needs no
// database never opens one), exit codes, and flag helpers.
package cmdutil

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/spf13/pflag"

	"github.com/hubctl/hubctl/internal/cli/iostreams"
	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/logging"
	"github.com/hubctl/hubctl/internal/store"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// Factory is built once per invocation. Commands take what they need from it
// when they run, never at construction, so `--help` touches nothing.
type Factory struct {
	IOStreams *iostreams.IOStreams
	// LookupEnv reads the environment; tests inject a map.
	LookupEnv func(string) (string, bool)
	// Environ lists the environment as KEY=value, for the warning about
	// STREAMING_HUB_* variables no setting reads; nil skips it.
	Environ func() []string

	// Defaults replace built-in defaults (env name -> value); `hubctl dev`
	// uses them for local settings that env, file and flags still override.
	Defaults map[string]string

	mu      sync.Mutex
	flags   *pflag.FlagSet
	cfgFile string
	cfg     *config.Config
	cfgErr  error
	cfgDone bool
	// envWarned and deprecationsWarned make each warning once per
	// invocation, however often the configuration is resolved.
	envWarned          bool
	deprecationsWarned bool
}

// New returns a factory over the process's real streams and environment.
func New() *Factory {
	return &Factory{IOStreams: iostreams.System(), LookupEnv: os.LookupEnv, Environ: os.Environ}
}

// UseFlags records the running command's flags (bound to settings with
// config.BindFlag) and the --config path; the root command calls it before
// any command runs.
func (f *Factory) UseFlags(fs *pflag.FlagSet, configFile string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flags, f.cfgFile = fs, configFile
	f.cfgDone = false
}

// Config resolves the configuration once per invocation.
func (f *Factory) Config() (*config.Config, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.cfgDone {
		f.cfg, f.cfgErr = config.Load(config.LoadOptions{
			ConfigFile: f.cfgFile,
			Flags:      f.flags,
			LookupEnv:  f.LookupEnv,
			Defaults:   f.Defaults,
		})
		f.cfgDone = true
		if f.Environ != nil && !f.envWarned {
			f.envWarned = true
			for _, w := range config.UnknownEnvWarnings(f.Environ()) {
				fmt.Fprintln(f.IOStreams.ErrOut, "warning: "+w)
			}
		}
		if f.cfg != nil && !f.deprecationsWarned {
			f.deprecationsWarned = true
			for _, w := range f.cfg.Deprecations {
				fmt.Fprintln(f.IOStreams.ErrOut, "warning: "+w)
			}
		}
	}
	return f.cfg, f.cfgErr
}

// Logger builds the process logger from the configuration: text for people
// in local mode, JSON lines everywhere else, always on stderr.
func (f *Factory) Logger() (*slog.Logger, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	return logging.New(f.IOStreams.ErrOut, cfg.LogLevel, cfg.Environment == config.EnvironmentLocal), nil
}

// Store opens the configured database (direct mode). The caller closes it.
func (f *Factory) Store(ctx context.Context) (*store.Store, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	return store.Open(ctx, cfg.Postgres.DSN, pg.Options{
		MaxConns: int32(cfg.Postgres.MaxOpenConns),
		AppName:  "hubctl",
	})
}

// FlagOrEnv returns the running command's flag flagName when the user set
// it, else the environment variable env. It serves the settings that live
// outside the STREAMING_HUB_ registry because they are the client's, not
// the hub's: HUBCTL_SERVER, HUBCTL_TOKEN, HUBCTL_TENANT.
func (f *Factory) FlagOrEnv(flagName, env string) string {
	f.mu.Lock()
	fs := f.flags
	f.mu.Unlock()
	if fs != nil {
		if flag := fs.Lookup(flagName); flag != nil && flag.Changed {
			return flag.Value.String()
		}
	}
	value, _ := f.LookupEnv(env)
	return value
}
