package rabbittest

import (
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

func TestTopologyRoutesBoundKeysAndIsRemoved(t *testing.T) {
	b := Connect(t)
	var exchange, queue string
	t.Run("use", func(t *testing.T) {
		top := b.NewTopology(t)
		exchange, queue = top.Exchange, top.Queue
		top.Bind(t, "a.b")
		// Confirmed publishes are in the queue before Drain reads it.
		ch, err := b.Conn().Channel()
		if err != nil {
			t.Fatal(err)
		}
		if err := ch.Confirm(false); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"a.b", "unbound", "a.b"} {
			confirm, err := ch.PublishWithDeferredConfirm(top.Exchange, key, false, false, amqp.Publishing{Body: []byte(key)})
			if err != nil {
				t.Fatal(err)
			}
			if !confirm.Wait() {
				t.Fatalf("publish with key %s not confirmed", key)
			}
		}
		got := top.Drain(t)
		if len(got) != 2 || string(got[0].Body) != "a.b" || string(got[1].Body) != "a.b" {
			t.Fatalf("Drain = %d messages, want the two bound ones", len(got))
		}
		if again := top.Drain(t); len(again) != 0 {
			t.Fatalf("a second Drain returned %d messages", len(again))
		}
	})

	// The subtest's cleanup deleted both; a passive declare on a channel
	// of its own (a failed one closes it) says so.
	for _, check := range []func(*amqp.Channel) error{
		func(ch *amqp.Channel) error {
			return ch.ExchangeDeclarePassive(exchange, amqp.ExchangeDirect, false, false, false, false, nil)
		},
		func(ch *amqp.Channel) error {
			_, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
			return err
		},
	} {
		ch, err := b.Conn().Channel()
		if err != nil {
			t.Fatal(err)
		}
		if err := check(ch); err == nil {
			t.Errorf("exchange or queue %s outlived its test", exchange)
		}
	}
}

func TestURLOverride(t *testing.T) {
	t.Setenv(EnvURL, "amqp://u:p@broker.example:5673/vh")
	if got := URL(); got != "amqp://u:p@broker.example:5673/vh" {
		t.Fatalf("URL() = %q, want the override", got)
	}
	t.Setenv(EnvURL, "")
	if got := URL(); got != defaultURL {
		t.Fatalf("URL() = %q, want %q", got, defaultURL)
	}
}
