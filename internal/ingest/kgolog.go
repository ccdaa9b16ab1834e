package ingest

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kgoLogger forwards franz-go's own logs to slog. franz-go logs connection,
// metadata and group events, never record contents. Its info level narrates
// every metadata refresh, so only warnings and errors pass unless the
// process logs at debug level.
//
// It also watches for fencing: franz-go reports a FENCED_INSTANCE_ID from a
// heartbeat, join or sync in its log before it tells the consumer that its
// partitions are lost, and ingest reports fencing itself, once (fencing.go).
type kgoLogger struct {
	log    *slog.Logger
	fenced func()
}

// Level lets info through even when the process does not log at debug
// level: that is where franz-go reports a fenced heartbeat. Log drops what
// the process does not want.
func (l kgoLogger) Level() kgo.LogLevel { return kgo.LogLevelInfo }

func (l kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	if reportsFencing(keyvals) {
		if l.fenced != nil {
			l.fenced()
		}
		return
	}
	var sl slog.Level
	switch level {
	case kgo.LogLevelError:
		sl = slog.LevelError
	case kgo.LogLevelWarn:
		sl = slog.LevelWarn
	case kgo.LogLevelInfo:
		sl = slog.LevelDebug // see the type's comment
	default:
		sl = slog.LevelDebug - 4
	}
	ctx := context.Background()
	if !l.log.Enabled(ctx, sl) {
		return
	}
	l.log.Log(ctx, sl, msg, keyvals...)
}

// reportsFencing reports whether a franz-go log line is about this member
// being fenced: an error value, or a commit's per-partition error code.
func reportsFencing(keyvals []any) bool {
	for i, kv := range keyvals {
		if err, ok := kv.(error); ok && isFenced(err) {
			return true
		}
		if key, ok := kv.(string); ok && key == "error_code" && i+1 < len(keyvals) {
			if code, ok := keyvals[i+1].(int16); ok && code == kerr.FencedInstanceID.Code {
				return true
			}
		}
	}
	return false
}
