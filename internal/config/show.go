package config

import "log/slog"

// resolvedValue is one setting as Load resolved it.
type resolvedValue struct {
	setting Setting
	text    string
	source  Source
}

// ShowEntry is one line of `hubctl config show`.
type ShowEntry struct {
	Setting string `json:"setting" yaml:"setting"`
	Value   string `json:"value" yaml:"value"`
	Source  Source `json:"source" yaml:"source"`
}

// Show lists every setting in registry order with its effective value,
// secrets masked, and the layer it came from. It describes what Load
// resolved, so a Config assembled by hand shows nothing.
func (c *Config) Show() []ShowEntry {
	entries := make([]ShowEntry, len(c.resolved))
	for i, r := range c.resolved {
		entries[i] = ShowEntry{
			Setting: r.setting.Env,
			Value:   r.setting.Mask(r.text),
			Source:  r.source,
		}
	}
	return entries
}

// LogValue lets a Config be logged whole (slog.Any("config", cfg)) with the
// same masking as Show, so start-up logging cannot leak a secret.
func (c *Config) LogValue() slog.Value {
	attrs := make([]slog.Attr, len(c.resolved))
	for i, entry := range c.Show() {
		attrs[i] = slog.String(entry.Setting, entry.Value)
	}
	return slog.GroupValue(attrs...)
}
