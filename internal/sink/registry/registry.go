// Package registry assembles the hub's sink registry: every sink type, built
// once per process with what its sinks share. Adding a sink type is one line
// here. Both `hubctl serve` and the CLI's direct mode (which verifies
// subscriptions itself) use it.
package registry

import (
	"github.com/hubctl/hubctl/internal/buildinfo"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/pull"
	"github.com/hubctl/hubctl/internal/sink/webhook"
)

// Options are the process-wide settings sinks depend on.
type Options struct {
	// AllowPrivate lifts the outbound address filter
	// (STREAMING_HUB_ALLOW_PRIVATE_SINKS).
	AllowPrivate bool
}

// Sinks is the registry plus what must be released at shutdown.
type Sinks struct {
	*sink.Registry
	webhook *webhook.Type
}

// New builds the registry of every sink type.
func New(opts Options) (*Sinks, error) {
	wh := webhook.NewType(webhook.Options{AllowPrivate: opts.AllowPrivate, UserAgent: buildinfo.UserAgent()})
	reg, err := sink.NewRegistry(wh, pull.NewType())
	if err != nil {
		return nil, err
	}
	return &Sinks{Registry: reg, webhook: wh}, nil
}

// Close releases pooled connections.
func (s *Sinks) Close() {
	s.webhook.CloseIdleConnections()
}
