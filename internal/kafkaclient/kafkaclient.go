// Package kafkaclient turns the Kafka settings into franz-go client options,
// so the hub's consumer and the CLI's producer connect the same way, and
// says why a connection fails in the words of the settings.
package kafkaclient

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/config"
)

// Options returns the connection options: seed brokers, client id, TLS and
// SASL. Callers add what their role needs (group, topics, producing).
// Credentials that can change while the process runs (certificate files,
// OAuth tokens, the AWS credential chain) are read again as they change,
// on the next connection; ctx bounds only what Options itself does.
func Options(ctx context.Context, k config.KafkaConfig, clientID string) ([]kgo.Opt, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(k.Brokers...),
		kgo.ClientID(clientID),
	}
	if k.TLSEnabled {
		cfg, err := tlsConfig(k)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	if k.SASLMechanism != config.SASLNone {
		mechanism, err := saslMechanism(ctx, k)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(mechanism))
	}
	return opts, nil
}
