// A consumer of a hubctl Pub/Sub subscription: it receives from a Pub/Sub
// subscription of the topic the hub publishes to, takes the lerian-* values
// from the message attributes and handles each event id once. With the
// emulator, set PUBSUB_EMULATOR_HOST and the client needs no credentials.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"sync"

	"cloud.google.com/go/pubsub/v2"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	client, err := pubsub.NewClient(ctx, os.Getenv("PUBSUB_PROJECT")) // acme-prod
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	// Keep handled ids where the effect of handling them is stored, in
	// the same transaction; a map stands in for that table here. Receive
	// calls the handler on several goroutines at once.
	var mu sync.Mutex
	handled := map[string]bool{}
	err = client.Subscriber(os.Getenv("PUBSUB_SUBSCRIPTION")).Receive(ctx, func(_ context.Context, msg *pubsub.Message) {
		a := msg.Attributes
		id := a["lerian-event-id"] // also ce-id
		mu.Lock()
		defer mu.Unlock()
		if !handled[id] {
			// OrderingKey is the event's ordering key when the hub's
			// subscription orders (and this subscription has message
			// ordering enabled, so a key's messages arrive in order).
			log.Printf("event %s (%s) of tenant %s, schema %s, key %q: %s", id,
				a["lerian-event-type"], a["lerian-tenant-id"], a["lerian-schema-version"], msg.OrderingKey, msg.Data)
			handled[id] = true
		}
		msg.Ack()
	})
	if err != nil {
		log.Fatal(err)
	}
}
