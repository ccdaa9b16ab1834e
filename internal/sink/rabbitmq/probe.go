package rabbitmq

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hubctl/hubctl/internal/sink"
	whsign "github.com/hubctl/hubctl/pkg/webhook"
)

// verificationMessage is the body of the probe's message.
type verificationMessage struct {
	Type           string `json:"type"`
	SubscriptionID string `json:"subscription_id"`
	TenantID       string `json:"tenant_id"`
}

// Probe checks that deliveries would arrive: it connects, opens a channel,
// passive-declares the exchange, then publishes a hub.verification message
// (mandatory, not persistent) to each routing key deliveries will use and
// waits for the broker's confirmation. A routing key that routes nowhere
// fails verification, instead of dead-lettering every event later.
func (s *rabbitSink) Probe(ctx context.Context, p sink.ProbeRequest) error {
	timeout := sink.AttemptTimeout(p.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := runBounded(ctx, func() error {
		if err := s.broker.checkExchange(ctx, s.exchange); err != nil {
			return err
		}
		msg, err := verificationPublishing(p)
		if err != nil {
			return err
		}
		for _, key := range probeRoutingKeys(s.routingKey, p.EventTypes) {
			if err := s.broker.publish(ctx, s.exchange, key, msg); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return errors.New(describeError(ctx, err, timeout))
	}
	return nil
}

// probeRoutingKeys are the routing keys a probe publishes to: the fixed
// key when the subscription has one, else each exact event key it
// subscribes to (the key its deliveries will carry). A wildcard entry names
// no key a delivery would use, so it is not probed: a subscription made of
// wildcards only is checked up to the exchange.
func probeRoutingKeys(fixed *string, eventTypes []string) []string {
	if fixed != nil {
		return []string{*fixed}
	}
	var keys []string
	seen := map[string]bool{}
	for _, t := range eventTypes {
		if t == "" || strings.Contains(t, "*") || seen[t] {
			continue
		}
		seen[t] = true
		keys = append(keys, t)
	}
	return keys
}

// verificationPublishing is the probe's message: typed hub.verification in
// its properties and headers so consumers can drop it, and transient, since
// it carries nothing worth keeping across a broker restart.
func verificationPublishing(p sink.ProbeRequest) (amqp.Publishing, error) {
	body, err := json.Marshal(verificationMessage{
		Type:           whsign.VerificationEventType,
		SubscriptionID: p.SubscriptionID,
		TenantID:       p.TenantID,
	})
	if err != nil {
		return amqp.Publishing{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return amqp.Publishing{}, err
	}
	return amqp.Publishing{
		Headers: amqp.Table{
			sink.AttrEventType: whsign.VerificationEventType,
			sink.AttrTenantID:  p.TenantID,
		},
		ContentType:  "application/json",
		DeliveryMode: amqp.Transient,
		MessageId:    id.String(),
		Timestamp:    time.Now(),
		Type:         whsign.VerificationEventType,
		AppId:        appID,
		Body:         body,
	}, nil
}
