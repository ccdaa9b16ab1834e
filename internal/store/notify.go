package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// JobsChannel is the PostgreSQL notification channel an ingest transaction
// signals, at commit, when it created delivery jobs: dispatch workers LISTEN
// on it to wake without polling. The payload is empty.
const JobsChannel = "hubctl_jobs"

// queueJobsNotify signals JobsChannel from the transaction pipe belongs to.
// PostgreSQL delivers it at commit, and only then: a worker woken by it sees
// the jobs.
func queueJobsNotify(pipe *pgx.Batch) {
	pipe.Queue(`SELECT pg_notify($1, '')`, JobsChannel)
}

// JobsListener receives the notifications ingest sends on JobsChannel. It
// holds a connection of its own, outside the pool, for as long as it lives.
type JobsListener struct {
	conn *pgx.Conn
}

// ListenJobs opens a connection with the pool's settings and LISTENs on
// JobsChannel.
func (s *Store) ListenJobs(ctx context.Context) (*JobsListener, error) {
	conn, err := pgx.ConnectConfig(ctx, s.Pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, classify(fmt.Errorf("listen for new jobs: %w", err))
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{JobsChannel}.Sanitize()); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, classify(fmt.Errorf("listen for new jobs: %w", err))
	}
	return &JobsListener{conn: conn}, nil
}

// Wait blocks until a notification arrives, ctx ends or the connection is
// lost; after an error other than ctx's the listener is useless and should
// be closed and opened again.
func (l *JobsListener) Wait(ctx context.Context) error {
	_, err := l.conn.WaitForNotification(ctx)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return ctxErr
		}
		return classify(fmt.Errorf("wait for new jobs: %w", err))
	}
	return nil
}

// Close ends the listener's connection.
func (l *JobsListener) Close(ctx context.Context) error {
	return l.conn.Close(ctx)
}
