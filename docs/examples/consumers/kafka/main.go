// A consumer of a hubctl Kafka subscription: records are CloudEvents in
// binary mode (ce_* headers, the value the event data) with the lerian-*
// values as headers; it handles each event id once.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"

	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	client, err := kgo.NewClient(
		kgo.SeedBrokers(os.Getenv("KAFKA_BROKERS")), // 127.0.0.1:9092
		kgo.ConsumerGroup("orders-service"),
		kgo.ConsumeTopics(os.Getenv("KAFKA_TOPIC")),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	// Keep handled ids where the effect of handling them is stored, in
	// the same transaction; a map stands in for that table here.
	handled := map[string]bool{}
	for ctx.Err() == nil {
		fetches := client.PollFetches(ctx)
		fetches.EachRecord(func(r *kgo.Record) {
			h := map[string]string{}
			for _, header := range r.Headers {
				h[header.Key] = string(header.Value)
			}
			id := h["lerian-event-id"] // also ce_id
			if handled[id] {
				return // a retry the hub made after a lost acknowledgement
			}
			log.Printf("event %s (%s) of tenant %s, schema %s: %s", id,
				h["lerian-event-type"], h["lerian-tenant-id"], h["lerian-schema-version"], r.Value)
			handled[id] = true
		})
	}
}
