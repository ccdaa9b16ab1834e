package ingest

import (
	"errors"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Static membership (STREAMING_HUB_KAFKA_INSTANCE_ID) lets a restarted
// process take its partitions back at once. The price is that the group
// cannot tell a restart from a second live process given the same id: it
// hands the partitions to whoever joined last and answers the other with
// FENCED_INSTANCE_ID. Rejoining would fence the newcomer in turn, so the
// fenced member stops ingesting for good, says so once, and reports not
// ready; an operator (or the orchestrator acting on /readyz) restarts it
// with a unique id.

// groupErrors receives the errors that end a group session.
type groupErrors struct{ c *Consumer }

var _ kgo.HookGroupManageError = groupErrors{}

func (h groupErrors) OnGroupManageError(err error) {
	if isFenced(err) {
		h.c.markFenced()
	}
}

func isFenced(err error) bool { return errors.Is(err, kerr.FencedInstanceID) }

// markFenced records that another process holds this instance id. It logs
// once and wakes Run, which closes the client without leaving the group:
// leaving would take the partitions from the process that now owns them.
func (c *Consumer) markFenced() {
	c.fenceOnce.Do(func() {
		c.fencedFlag.Store(true)
		c.joined.Store(false)
		c.log.Error("fenced: another process joined the consumer group with this STREAMING_HUB_KAFKA_INSTANCE_ID; ingest stops here and /readyz answers 503 until this process is restarted with a unique id",
			slog.String("group", c.opts.Kafka.Group), slog.String("instance_id", c.opts.Kafka.InstanceID))
		close(c.fenced)
	})
}

// Fenced reports whether another process with the same instance id took
// this consumer's place in the group.
func (c *Consumer) Fenced() bool { return c.fencedFlag.Load() }
