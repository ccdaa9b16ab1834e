package ingest

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
)

// kgoLogger forwards franz-go's own logs to slog. franz-go logs connection,
// metadata and group events, never record contents. Its info level narrates
// every metadata refresh, so only warnings and errors pass unless the
// process logs at debug level.
type kgoLogger struct{ log *slog.Logger }

func (l kgoLogger) Level() kgo.LogLevel {
	switch ctx := context.Background(); {
	case l.log.Enabled(ctx, slog.LevelDebug):
		return kgo.LogLevelInfo
	case l.log.Enabled(ctx, slog.LevelWarn):
		return kgo.LogLevelWarn
	default:
		return kgo.LogLevelError
	}
}

func (l kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
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
	l.log.Log(context.Background(), sl, msg, keyvals...)
}
