// A consumer of a hubctl NATS subscription: it reads the stream the
// subscription's subject is captured by, takes the lerian-* values from the
// headers and handles each event id once.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	nc, err := nats.Connect(os.Getenv("NATS_URL")) // nats://127.0.0.1:4222
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		log.Fatal(err)
	}
	consumer, err := js.CreateOrUpdateConsumer(ctx, os.Getenv("NATS_STREAM"), jetstream.ConsumerConfig{
		Durable: "orders-service", AckPolicy: jetstream.AckExplicitPolicy,
	})
	if err != nil {
		log.Fatal(err)
	}
	// Keep handled ids where the effect of handling them is stored, in
	// the same transaction; a map stands in for that table here.
	handled := map[string]bool{}
	sub, err := consumer.Consume(func(msg jetstream.Msg) {
		h := msg.Headers()
		id := h.Get("lerian-event-id") // also Nats-Msg-Id and ce-id
		if !handled[id] {
			log.Printf("event %s (%s) of tenant %s, schema %s: %s", id,
				h.Get("lerian-event-type"), h.Get("lerian-tenant-id"), h.Get("lerian-schema-version"), msg.Data())
			handled[id] = true
		}
		_ = msg.Ack()
	})
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Stop()
	<-ctx.Done()
}
