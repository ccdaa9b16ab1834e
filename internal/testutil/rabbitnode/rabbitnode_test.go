package rabbitnode

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// TestNodeLifecycle starts a node, restarts it around a persistent message
// in a durable queue, and checks that the message survived, that clients
// were told of the shutdown, that the node refused connections while down,
// and that nothing of it is left running once its test has ended.
func TestNodeLifecycle(t *testing.T) {
	realCookie := ""
	if home, err := os.UserHomeDir(); err == nil {
		realCookie = filepath.Join(home, ".erlang.cookie")
	}
	_, statErr := os.Stat(realCookie)
	hadCookie := statErr == nil

	var pids []int
	t.Run("restart", func(t *testing.T) {
		node := Start(t)

		conn := dial(t, node.URL())
		ch := channel(t, conn)
		const queue = "rabbitnode-durable"
		if _, err := ch.QueueDeclare(queue, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
		if err := ch.Confirm(false); err != nil {
			t.Fatal(err)
		}
		confirm, err := ch.PublishWithDeferredConfirm("", queue, true, false, amqp.Publishing{
			DeliveryMode: amqp.Persistent, MessageId: "kept", Body: []byte("survives"),
		})
		if err != nil {
			t.Fatal(err)
		}
		if acked, err := confirm.WaitContext(t.Context()); err != nil || !acked {
			t.Fatalf("publish not confirmed: acked=%v err=%v", acked, err)
		}
		closed := conn.NotifyClose(make(chan *amqp.Error, 1))

		if err := node.Stop(); err != nil {
			t.Fatal(err)
		}
		select {
		case reason := <-closed:
			// The broker says connection-forced and closes the socket at
			// once, so the client may report the reset of its reply instead.
			if reason == nil {
				t.Error("the client's connection was closed without a reason, as if by the client itself")
			}
		case <-time.After(10 * time.Second):
			t.Error("the client's connection was still open 10s after the node stopped")
		}
		if c, err := amqp.DialConfig(node.URL(), amqp.Config{Dial: amqp.DefaultDial(time.Second)}); err == nil {
			c.Close()
			t.Fatal("a stopped node accepted a connection")
		}

		if err := node.Start(); err != nil {
			t.Fatal(err)
		}
		ch = channel(t, dial(t, node.URL()))
		msg, ok, err := ch.Get(queue, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok || msg.MessageId != "kept" || string(msg.Body) != "survives" {
			t.Fatalf("after the restart the queue held ok=%v id=%q body=%q, want the persistent message", ok, msg.MessageId, msg.Body)
		}
		beam := node.node.Pid()
		pids = append([]int{beam, node.epmd.Pid()}, descendants(beam)...)
	})
	if t.Failed() || len(pids) == 0 {
		return
	}
	t.Logf("node, epmd and VM helper processes: %v", pids)
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d still runs after the test ended", pid)
		}
	}
	if _, err := os.Stat(realCookie); !hadCookie && err == nil {
		t.Errorf("the node created %s; it must keep its cookie in its own directory", realCookie)
	}
}

func dial(t *testing.T, url string) *amqp.Connection {
	t.Helper()
	conn, err := amqp.DialConfig(url, amqp.Config{Dial: amqp.DefaultDial(5 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func channel(t *testing.T, conn *amqp.Connection) *amqp.Channel {
	t.Helper()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestNodeEnv(t *testing.T) {
	base := []string{
		"PATH=/usr/bin",
		"HOME=/root",
		"RABBITMQ_NODENAME=rabbit@localhost",
		"RABBITMQ_USE_LONGNAME=true",
		"ERL_FLAGS=-kernel inet_dist_use_interface {0,0,0,0}",
		"ERL_LIBS=/opt/plugins",
		"NOTIFY_SOCKET=/run/systemd/notify",
		"LANG=C.UTF-8",
		"MALFORMED",
	}
	settings := map[string]string{"HOME": "/tmp/node/home", "RABBITMQ_NODENAME": "hubctl-x@localhost"}
	got := nodeEnv(base, settings)
	slices.Sort(got)
	want := []string{"HOME=/tmp/node/home", "LANG=C.UTF-8", "MALFORMED", "PATH=/usr/bin", "RABBITMQ_NODENAME=hubctl-x@localhost"}
	if !slices.Equal(got, want) {
		t.Errorf("nodeEnv =\n%q\nwant\n%q", got, want)
	}
}

func TestPortConflict(t *testing.T) {
	tests := []struct {
		log  string
		want bool
	}{
		{`{"init terminating in do_boot",{error,{could_not_start_listener,"127.0.0.1",20001,{{shutdown,{failed_to_start_child,ranch_acceptors_sup,{listen_error,{acceptor,{127,0,0,1},20001},eaddrinuse}}}}}}}`, true},
		{`reason: {dist_port_already_used,20002,not_erlang,"localhost"}`, true},
		{"BOOT FAILED: {error,{cannot_read_enabled_plugins_file}}", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := portConflict(tt.log); got != tt.want {
			t.Errorf("portConflict(%q) = %v, want %v", tt.log, got, tt.want)
		}
	}
	if !strings.Contains(installHint, "apt-get install -y rabbitmq-server") {
		t.Errorf("the install hint %q does not say how to install RabbitMQ", installHint)
	}
}
