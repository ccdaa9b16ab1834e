package events

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/config"
)

// Producer publishes well-formed events of one tenant and event key for
// other commands (hubctl bench), built and sent exactly as produce builds
// and sends them, so what it writes is what ingest accepts.
type Producer struct {
	client *kgo.Client
	tmpl   template
}

// NewProducer checks the event against ingest's rules, connects to the
// configured brokers and pings them. The caller closes it. linger is how
// long a partition's records wait for more before they are sent
// (kgo.ProducerLinger).
func NewProducer(ctx context.Context, cfg *config.Config, tenant, eventKey string, linger time.Duration) (*Producer, error) {
	tmpl, err := newTemplate(produceInput{
		Tenant: tenant, Type: eventKey, Source: "midaz", SchemaVersion: "1.0.0",
		ContentType: "application/json", Data: []byte("{}"),
	}, cfg.Ingest.TypePrefix)
	if err != nil {
		return nil, cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	kopts, err := clientOptions(ctx, cfg.Kafka)
	if err != nil {
		return nil, cmdutil.WithCode(cmdutil.ExitUsage, err)
	}
	client, err := kgo.NewClient(append(kopts, kgo.ProducerLinger(linger))...)
	if err != nil {
		return nil, cmdutil.WithCode(cmdutil.ExitUsage, fmt.Errorf("kafka client: %w", err))
	}
	if err := ping(ctx, client); err != nil {
		client.Close()
		return nil, cmdutil.WithCode(kafkaExitCode(err), newUnreachable(cfg.Kafka, err))
	}
	return &Producer{client: client, tmpl: tmpl}, nil
}

// Topic is where the events go.
func (p *Producer) Topic() string { return p.tmpl.topic }

// NewEventID is a fresh event id.
func NewEventID() string { return newEventID() }

// Produce publishes one event with data (JSON) asynchronously; done gets
// the broker's answer.
func (p *Producer) Produce(ctx context.Context, id string, at time.Time, data []byte, done func(error)) {
	r := p.tmpl.record(id, at)
	r.Value = data
	p.client.Produce(ctx, r, func(_ *kgo.Record, err error) { done(err) })
}

// Flush waits until every event produced so far is acknowledged.
func (p *Producer) Flush(ctx context.Context) error {
	if err := p.client.Flush(ctx); err != nil {
		return cmdutil.WithCode(kafkaExitCode(err), fmt.Errorf("publish to %s: %w", p.tmpl.topic, err))
	}
	return nil
}

// Close disconnects.
func (p *Producer) Close() { p.client.Close() }
