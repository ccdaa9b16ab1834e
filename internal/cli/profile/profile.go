// Package profile keeps the hubs a person talks to, like kubectl contexts
// or `gh auth`: named contexts of a server URL, a token, an optional tenant
// and optional Kafka brokers, and which one is current, in one file only its owner can read.
// `hubctl login` and `hubctl dev` write it; every command that reaches a
// hub reads it when neither --server nor a database is given.
package profile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Environment variables that move or pick the profiles.
const (
	// EnvConfigDir replaces the directory of the profile file.
	EnvConfigDir = "HUBCTL_CONFIG_DIR"
	// EnvContext picks a context for one shell instead of the current one.
	EnvContext = "HUBCTL_CONTEXT"
)

// fileName is the profile file inside the directory.
const fileName = "config.yaml"

// Context is one hub: where it is and the token to show it.
type Context struct {
	Name   string `yaml:"name"`
	Server string `yaml:"server"`
	Token  string `yaml:"token"`
	// Tenant is the tenant subscription commands act on with an admin
	// token, and the one events produce and trigger publish as. With a
	// tenant key it can only be the key's own: the API refuses any other.
	Tenant string `yaml:"tenant,omitempty"`
	// Brokers are the hub's Kafka bootstrap brokers, for the commands that
	// publish to it (events produce, events trigger, bench) when neither
	// --brokers nor STREAMING_HUB_KAFKA_BROKERS names any.
	Brokers []string `yaml:"brokers,omitempty"`
	// CAFile is a PEM bundle of authorities to trust for Server beside the
	// system's (hubctl login --ca-file).
	CAFile string `yaml:"ca_file,omitempty"`
}

// File is the profile file's content.
type File struct {
	Current  string    `yaml:"current_context,omitempty"`
	Contexts []Context `yaml:"contexts"`
}

// Path is where the profile file lives: $HUBCTL_CONFIG_DIR/config.yaml, else
// hubctl/config.yaml under the user's configuration directory
// ($XDG_CONFIG_HOME, else ~/.config, or ~/Library/Application Support on
// macOS). Everything is read through lookupEnv, so an environment without
// a home has no profiles rather than someone else's.
func Path(lookupEnv func(string) (string, bool)) (string, error) {
	if dir, ok := lookupEnv(EnvConfigDir); ok && dir != "" {
		return filepath.Join(dir, fileName), nil
	}
	if dir, ok := lookupEnv("XDG_CONFIG_HOME"); ok && filepath.IsAbs(dir) {
		return filepath.Join(dir, "hubctl", fileName), nil
	}
	home, ok := lookupEnv("HOME")
	if !ok || !filepath.IsAbs(home) {
		return "", fmt.Errorf("no directory for hubctl's profiles: set HOME or %s", EnvConfigDir)
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "hubctl", fileName), nil
	}
	return filepath.Join(home, ".config", "hubctl", fileName), nil
}

// Load reads the profile file at path; a missing file is an empty one.
func Load(path string) (*File, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &File{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read profiles: %w", err)
	}
	var f File
	if err := yaml.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("read profiles %s: not a hubctl profile file: %w", path, err)
	}
	return &f, nil
}

// Save writes the file at path readable by its owner only (0600, in a 0700
// directory): it holds tokens. It replaces the file in one rename, so a
// crash never leaves half a file.
func (f *File) Save(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("save profiles: %w", err)
	}
	raw, err := yaml.Marshal(f)
	if err != nil {
		return fmt.Errorf("save profiles: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".config-*.yaml")
	if err != nil {
		return fmt.Errorf("save profiles: %w", err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600 already; said again so the mode does
	// not rest on that detail.
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("save profiles: %w", err)
	}
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return fmt.Errorf("save profiles: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save profiles: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("save profiles: %w", err)
	}
	return nil
}

// Set adds c, or replaces the context of the same name.
func (f *File) Set(c Context) {
	if i := slices.IndexFunc(f.Contexts, func(x Context) bool { return x.Name == c.Name }); i >= 0 {
		f.Contexts[i] = c
		return
	}
	f.Contexts = append(f.Contexts, c)
}

// Get returns the context named name.
func (f *File) Get(name string) (Context, bool) {
	i := slices.IndexFunc(f.Contexts, func(x Context) bool { return x.Name == name })
	if i < 0 {
		return Context{}, false
	}
	return f.Contexts[i], true
}

// Use makes the context named name current.
func (f *File) Use(name string) error {
	if _, ok := f.Get(name); !ok {
		return f.unknown(name)
	}
	f.Current = name
	return nil
}

// Delete removes the context named name; when it was current, none is.
func (f *File) Delete(name string) error {
	i := slices.IndexFunc(f.Contexts, func(x Context) bool { return x.Name == name })
	if i < 0 {
		return f.unknown(name)
	}
	f.Contexts = slices.Delete(f.Contexts, i, i+1)
	if f.Current == name {
		f.Current = ""
	}
	return nil
}

// UnknownContextError says no context of that name is stored; commands
// exit 3 (not found) for it however the name was given.
type UnknownContextError struct {
	Name string
	// Known are the names that are stored.
	Known []string
}

func (e *UnknownContextError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("no context %q: there are none yet (hubctl login --server URL makes one)", e.Name)
	}
	return fmt.Sprintf("no context %q: the contexts are %s", e.Name, strings.Join(e.Known, ", "))
}

// unknown says a context does not exist and which do.
func (f *File) unknown(name string) error {
	known := make([]string, len(f.Contexts))
	for i, c := range f.Contexts {
		known[i] = c.Name
	}
	return &UnknownContextError{Name: name, Known: known}
}

// Active is the context commands use: the one $HUBCTL_CONTEXT names, else
// the current one. ok is false when there is none; an unknown name in
// $HUBCTL_CONTEXT is an error, never a silent fallback to another hub.
func (f *File) Active(lookupEnv func(string) (string, bool)) (c Context, ok bool, err error) {
	name := f.Current
	if env, set := lookupEnv(EnvContext); set && env != "" {
		name = env
		if _, found := f.Get(name); !found {
			return Context{}, false, fmt.Errorf("%s: %w", EnvContext, f.unknown(name))
		}
	}
	if name == "" {
		return Context{}, false, nil
	}
	c, ok = f.Get(name)
	return c, ok, nil
}
