// A webhook receiver for hubctl deliveries, on pkg/webhook.
//
//	WEBHOOK_SECRETS=whsec_... PORT=9000 go run ./docs/examples/go-receiver
//
// WEBHOOK_SECRETS is the subscription's signing secret; during a rotation,
// the new one and the previous one, comma-separated.
package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/hubctl/hubctl/pkg/webhook"
)

func main() {
	secrets := strings.Split(os.Getenv("WEBHOOK_SECRETS"), ",")
	addr := "127.0.0.1:" + os.Getenv("PORT")
	log.Fatal(http.ListenAndServe(addr, newReceiver(secrets, os.Stdout)))
}

// newReceiver answers 2xx to every authentic delivery and 401 to anything
// else. RequireSignature reads the body (up to 1 MiB), checks the signatures
// and the timestamp, and passes on only what verified.
func newReceiver(secrets []string, out io.Writer) http.Handler {
	var (
		mu   sync.Mutex
		seen = map[string]bool{} // event ids handled; keep them in your database
	)
	events := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		eventType := r.Header.Get(webhook.HeaderEventType)
		if eventType == webhook.VerificationEventType {
			w.WriteHeader(http.StatusNoContent) // the hub's probe: a 2xx is all it needs
			return
		}
		body, _ := io.ReadAll(r.Body) // verified already, read again from memory
		id := r.Header.Get(webhook.HeaderEventID)
		mu.Lock()
		defer mu.Unlock()
		if seen[id] { // a retry of an event already handled: acknowledge, do nothing
			fmt.Fprintln(out, "duplicate", id)
		} else {
			seen[id] = true
			fmt.Fprintln(out, "event", id, eventType, string(body))
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return webhook.RequireSignature(secrets, 0, events)
}
