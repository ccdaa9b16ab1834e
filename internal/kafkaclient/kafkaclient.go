// Package kafkaclient turns the Kafka settings into franz-go client options,
// so the hub's consumer and the CLI's producer connect the same way.
package kafkaclient

import (
	"crypto/tls"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/hubctl/hubctl/internal/config"
)

// Options returns the connection options: seed brokers, client id, TLS and
// SASL/SCRAM. Callers add what their role needs (group, topics, producing).
func Options(k config.KafkaConfig, clientID string) ([]kgo.Opt, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(k.Brokers...),
		kgo.ClientID(clientID),
	}
	if k.TLSEnabled {
		opts = append(opts, kgo.DialTLSConfig(&tls.Config{MinVersion: tls.VersionTLS12}))
	}
	auth := scram.Auth{User: k.SCRAMUsername, Pass: k.SCRAMPassword}
	switch k.SCRAMMechanism {
	case config.SCRAMNone:
	case config.SCRAMSHA256:
		opts = append(opts, kgo.SASL(auth.AsSha256Mechanism()))
	case config.SCRAMSHA512:
		opts = append(opts, kgo.SASL(auth.AsSha512Mechanism()))
	default:
		return nil, fmt.Errorf("unsupported STREAMING_HUB_KAFKA_SCRAM_MECHANISM %q", k.SCRAMMechanism)
	}
	return opts, nil
}
