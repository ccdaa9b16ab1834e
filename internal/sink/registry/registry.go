// Package registry assembles the hub's sink registry: every sink type, built
// once per process with what its sinks share. Adding a sink type is one line
// here. Both `hubctl serve` and the CLI's direct mode (which verifies
// subscriptions itself) use it.
package registry

import (
	"github.com/hubctl/hubctl/internal/buildinfo"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/eventbridge"
	"github.com/hubctl/hubctl/internal/sink/kafka"
	"github.com/hubctl/hubctl/internal/sink/nats"
	"github.com/hubctl/hubctl/internal/sink/pubsub"
	"github.com/hubctl/hubctl/internal/sink/pull"
	"github.com/hubctl/hubctl/internal/sink/rabbitmq"
	"github.com/hubctl/hubctl/internal/sink/s3"
	"github.com/hubctl/hubctl/internal/sink/sqs"
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
	// idle close the kept-alive HTTP connections of the types that pool
	// them; RabbitMQ, NATS, Kafka and Pub/Sub connections close with the last sink
	// that uses them.
	idle []func()
}

// New builds the registry of every sink type.
func New(opts Options) (*Sinks, error) {
	hooks := webhook.NewType(webhook.Options{AllowPrivate: opts.AllowPrivate, UserAgent: buildinfo.UserAgent()})
	queues := sqs.NewType(sqs.Options{AllowPrivate: opts.AllowPrivate})
	buses := eventbridge.NewType(eventbridge.Options{AllowPrivate: opts.AllowPrivate})
	buckets := s3.NewType(s3.Options{AllowPrivate: opts.AllowPrivate})
	reg, err := sink.NewRegistry(
		hooks,
		pull.NewType(),
		queues,
		rabbitmq.NewType(rabbitmq.Options{AllowPrivate: opts.AllowPrivate}),
		buses,
		nats.NewType(nats.Options{AllowPrivate: opts.AllowPrivate}),
		buckets,
		kafka.NewType(kafka.Options{AllowPrivate: opts.AllowPrivate}),
		pubsub.NewType(pubsub.Options{AllowPrivate: opts.AllowPrivate}),
	)
	if err != nil {
		return nil, err
	}
	return &Sinks{Registry: reg, idle: []func(){hooks.CloseIdleConnections, queues.CloseIdleConnections, buses.CloseIdleConnections, buckets.CloseIdleConnections}}, nil
}

// Close releases pooled connections.
func (s *Sinks) Close() {
	for _, closeIdle := range s.idle {
		closeIdle()
	}
}
