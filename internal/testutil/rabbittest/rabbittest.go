// Package rabbittest connects tests and benchmarks to the real RabbitMQ
// they publish to, and gives each a private exchange and queue.
//
// The broker is amqp://guest:guest@127.0.0.1:5672/ unless
// HUBCTL_TEST_RABBITMQ_URL names another. It is shared by every test
// process on the machine: tests only ever declare and delete names of their
// own ([Broker.NewTopology] makes them unique), and never stop, restart or
// purge the broker. Without a broker, tests fail when CI=true and are
// skipped otherwise.
package rabbittest

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"
)

// EnvURL names the broker to test against, as an amqp:// URL.
const EnvURL = "HUBCTL_TEST_RABBITMQ_URL"

const (
	defaultURL  = "amqp://guest:guest@127.0.0.1:5672/"
	dialTimeout = 3 * time.Second
	// namePrefix starts every exchange and queue a test declares, so that
	// what a killed test left behind is recognisable on the shared broker.
	namePrefix = "hubctl-test-"
)

// URL is the test broker's URL, credentials included.
func URL() string {
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	return defaultURL
}

// Broker is a connection to the test broker for setting up and reading
// back topology, outside any sink under test. It is closed when the test
// ends.
type Broker struct {
	url   string
	conn  *amqp.Connection
	admin *amqp.Channel
}

// Connect connects to the test broker and opens the admin channel. Without
// a broker it fails the test under CI=true and skips it otherwise, saying
// how to start one.
func Connect(tb testing.TB) *Broker {
	tb.Helper()
	url := URL()
	conn, err := amqp.DialConfig(url, amqp.Config{Dial: amqp.DefaultDial(dialTimeout)})
	if err != nil {
		msg := fmt.Sprintf("no RabbitMQ at %s (%v); start it with `rabbitmq-server -detached` or set %s", "127.0.0.1:5672", err, EnvURL)
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	tb.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		tb.Fatalf("rabbittest: admin channel: %v", err)
	}
	return &Broker{url: url, conn: conn, admin: ch}
}

// URL is the broker's URL, credentials included.
func (b *Broker) URL() string { return b.url }

// Admin is the channel that set-up and read-back go through. A failed
// operation closes an AMQP channel: a test that provokes one should open a
// channel of its own with Conn.
func (b *Broker) Admin() *amqp.Channel { return b.admin }

// Conn is the admin connection.
func (b *Broker) Conn() *amqp.Connection { return b.conn }

// UniqueName is a fresh exchange or queue name in the tests' namespace,
// declared by nobody: also what a test uses for one that must not exist.
func UniqueName() string { return namePrefix + uuid.NewString() }

// Topology is one test's direct exchange and durable queue, both deleted
// when the test ends. Nothing is bound until Bind says so.
type Topology struct {
	Exchange string
	Queue    string
	admin    *amqp.Channel
}

// NewTopology declares a uniquely named direct exchange and durable queue.
func (b *Broker) NewTopology(tb testing.TB) *Topology {
	tb.Helper()
	name := UniqueName()
	top := &Topology{Exchange: name, Queue: name, admin: b.admin}
	if err := b.admin.ExchangeDeclare(top.Exchange, amqp.ExchangeDirect, false, false, false, false, nil); err != nil {
		tb.Fatalf("rabbittest: declare exchange: %v", err)
	}
	if _, err := b.admin.QueueDeclare(top.Queue, true, false, false, false, nil); err != nil {
		tb.Fatalf("rabbittest: declare queue: %v", err)
	}
	// Registered after Connect's cleanup, so it runs before the
	// connection closes.
	tb.Cleanup(func() {
		_, _ = b.admin.QueueDelete(top.Queue, false, false, false)
		_ = b.admin.ExchangeDelete(top.Exchange, false, false)
	})
	return top
}

// Bind routes messages published to the exchange with routing key to the
// queue.
func (top *Topology) Bind(tb testing.TB, key string) {
	tb.Helper()
	if err := top.admin.QueueBind(top.Queue, key, top.Exchange, false, nil); err != nil {
		tb.Fatalf("rabbittest: bind %q: %v", key, err)
	}
}

// Unbind stops routing messages published with routing key to the queue.
func (top *Topology) Unbind(tb testing.TB, key string) {
	tb.Helper()
	if err := top.admin.QueueUnbind(top.Queue, key, top.Exchange, nil); err != nil {
		tb.Fatalf("rabbittest: unbind %q: %v", key, err)
	}
}

// Drain takes every message in the queue, oldest first, acknowledged so
// they are gone. It does not wait for messages still to come.
func (top *Topology) Drain(tb testing.TB) []amqp.Delivery {
	tb.Helper()
	var got []amqp.Delivery
	for {
		msg, ok, err := top.admin.Get(top.Queue, true)
		if err != nil {
			tb.Fatalf("rabbittest: get from %s: %v", top.Queue, err)
		}
		if !ok {
			return got
		}
		got = append(got, msg)
	}
}
