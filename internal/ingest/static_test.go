package ingest

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/testutil/syncbuf"
)

// linesWith returns the lines of log that contain every one of words.
func linesWith(log *syncbuf.Buffer, words ...string) []string {
	var out []string
	for line := range strings.SplitSeq(log.String(), "\n") {
		ok := line != ""
		for _, w := range words {
			ok = ok && strings.Contains(line, w)
		}
		if ok {
			out = append(out, line)
		}
	}
	return out
}

func static(id string, log *syncbuf.Buffer) func(*Options) {
	return func(o *Options) {
		o.Kafka.InstanceID = id
		o.Kafka.SessionTimeout = 10 * time.Second
		if log != nil {
			o.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo}))
		}
	}
}

// TestDuplicateInstanceIDIsFenced: a second live process given the same
// instance id takes the partitions; the first stops ingesting for good,
// says so in one log line and is no longer ready, instead of fighting for
// the group slot.
func TestDuplicateInstanceIDIsFenced(t *testing.T) {
	e := newEnv(t)
	e.addTenants("t-a")
	var firstLog syncbuf.Buffer
	first := e.start(static("hub-0", &firstLog))
	e.produce(cloudEvent(0, "t-a", eventID(1), []byte("{}")), cloudEvent(1, "t-a", eventID(2), []byte("{}")))
	e.waitStored(testTopic, 2)
	waitFor(t, "the first member to be ready", first.Ready)

	second := e.start(static("hub-0", nil))
	waitFor(t, "the first member to be fenced", first.Fenced)
	if first.Ready() {
		t.Fatal("a fenced member still reports ready")
	}
	waitFor(t, "the second member to be ready", second.Ready)

	batchesBefore := first.metric(t, "streaming_hub_ingest_batch_records")
	for i := 3; i <= 8; i++ {
		e.produce(cloudEvent(int32(i%testPartitions), "t-a", eventID(i), []byte("{}")))
	}
	e.waitStored(testTopic, 8)
	if n := e.count(`SELECT count(*) FROM events`); n != 8 {
		t.Fatalf("inbox holds %d events, want 8", n)
	}
	if after := first.metric(t, "streaming_hub_ingest_batch_records"); after != batchesBefore {
		t.Fatalf("the fenced member stored %v more batches", after-batchesBefore)
	}

	// franz-go would rejoin after a backoff of up to seconds and log each
	// failure; the member closes its client instead. Once the client refuses
	// requests the member has begun closing it on its own, and Close waits
	// for that close to end: after it, nothing of the client runs to log.
	waitFor(t, "the fenced member to close its client", func() bool {
		return errors.Is(first.client.Ping(t.Context()), kgo.ErrClientClosed)
	})
	first.Close()
	if got := linesWith(&firstLog, "fenced"); len(got) != 1 || !strings.Contains(got[0], "level=ERROR") || !strings.Contains(got[0], "instance_id=hub-0") {
		t.Fatalf("want one ERROR line about fencing naming the instance id, got %d:\n%s", len(got), strings.Join(got, "\n"))
	}
	if got := append(linesWith(&firstLog, "level=WARN"), linesWith(&firstLog, "level=ERROR")...); len(got) != 1 {
		t.Fatalf("the fenced member logged %d warnings and errors, want only the fencing line:\n%s", len(got), strings.Join(got, "\n"))
	}
	if !second.Ready() || second.Fenced() {
		t.Fatal("the member holding the id lost it")
	}
}

// TestStaticMemberRestartTakesItsPartitionsBack: a static member that goes
// away without leaving the group (as a crashed one does) is replaced by its
// restart at once, not after its session times out.
func TestStaticMemberRestartTakesItsPartitionsBack(t *testing.T) {
	e := newEnv(t)
	e.addTenants("t-a")
	first := e.start(static("hub-0", nil))
	e.produce(cloudEvent(0, "t-a", eventID(1), []byte("{}")))
	e.waitStored(testTopic, 1)
	first.stop() // a static member does not leave the group when it closes

	restarted := time.Now()
	second := e.start(static("hub-0", nil))
	e.produce(cloudEvent(1, "t-a", eventID(2), []byte("{}")))
	e.waitStored(testTopic, 2)
	waitFor(t, "the restarted member to be ready", second.Ready)
	// The session timeout is 10s: a restart that waited for it would take
	// longer than this.
	if took := time.Since(restarted); took > 5*time.Second {
		t.Fatalf("the restarted static member took %v to ingest again", took)
	}
}
