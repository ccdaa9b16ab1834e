package hub

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/kafkaclient"
	"github.com/hubctl/hubctl/internal/oprelay"
	"github.com/hubctl/hubctl/internal/store"
)

// newRelay builds the relay of operational events to
// STREAMING_HUB_OPERATIONAL_TOPIC and the producer it uses, which the
// caller closes after the relay stopped. Every role runs one: the
// instances take turns, one relaying at a time.
func newRelay(cfg *config.Config, st *store.Store, log *slog.Logger, reg prometheus.Registerer) (*oprelay.Relay, *kgo.Client, error) {
	opts, err := kafkaclient.Options(context.Background(), cfg.Kafka, "hubctl-operational-relay")
	if err != nil {
		return nil, nil, err
	}
	producer, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("operational relay: kafka client: %w", err)
	}
	relay, err := oprelay.New(oprelay.Options{Pool: st.Pool, Producer: producer, Topic: cfg.Kafka.OperationalTopic, Logger: log, Registerer: reg})
	if err != nil {
		producer.Close()
		return nil, nil, err
	}
	return relay, producer, nil
}
