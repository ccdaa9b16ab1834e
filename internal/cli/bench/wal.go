package bench

import (
	"context"
	_ "embed"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/benchmark"
)

// walProbe reads the database server's current WAL position, when the
// bench can reach the hub's database (STREAMING_HUB_POSTGRES_DSN).
// Without it, or when the server refuses, the run has no WAL figure.
type walProbe struct {
	conn *pgx.Conn
}

type walReading struct {
	lsn uint64
	ok  bool
}

func openWALProbe(ctx context.Context, dsn string) walProbe {
	if dsn == "" {
		return walProbe{}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return walProbe{}
	}
	return walProbe{conn: conn}
}

func (p walProbe) read(ctx context.Context) walReading {
	if p.conn == nil {
		return walReading{}
	}
	var text string
	if err := p.conn.QueryRow(ctx, currentWALLSNSQL).Scan(&text); err != nil {
		return walReading{}
	}
	lsn, err := benchmark.ParseLSN(text)
	if err != nil {
		return walReading{}
	}
	return walReading{lsn: lsn, ok: true}
}

func (p walProbe) close() {
	if p.conn != nil {
		_ = p.conn.Close(context.Background())
	}
}

//go:embed sql/current_wal_lsn.sql
var currentWALLSNSQL string
