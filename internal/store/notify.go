package store

import (
	_ "embed"

	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// JobsChannel is the PostgreSQL notification channel an ingest transaction
// signals, at commit, when it created delivery jobs: dispatch workers LISTEN
// on it to wake without polling. The payload is empty.
const JobsChannel = "hubctl_jobs"

// RosterChannel is the notification channel every change to the tenants
// table signals at commit (a trigger of migration 000002), whoever made it:
// the API, the CLI in direct mode, tenants purge, or SQL by hand. Ingest
// LISTENs on it to reload its roster at once.
const RosterChannel = "hubctl_roster"

// queueJobsNotify signals JobsChannel from the transaction pipe belongs to.
// PostgreSQL delivers it at commit, and only then: a worker woken by it sees
// the jobs.
func queueJobsNotify(pipe *pgx.Batch) {
	pipe.Queue(notifyJobsSQL, pgx.StrictNamedArgs{"jobs_channel": JobsChannel})
}

// ListenJobs LISTENs on JobsChannel.
func (s *Store) ListenJobs(ctx context.Context) (*Listener, error) {
	return s.Listen(ctx, JobsChannel, "new jobs")
}

// Listener receives the notifications of one channel. It holds a connection
// of its own, outside the pool, for as long as it lives.
type Listener struct {
	conn *pgx.Conn
	what string // what the listener waits for, for errors
}

// Listen opens a connection with the pool's settings and LISTENs on
// channel; what names the wait in errors ("new jobs").
func (s *Store) Listen(ctx context.Context, channel, what string) (*Listener, error) {
	conn, err := pgx.ConnectConfig(ctx, s.Pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, classify(fmt.Errorf("listen for %s: %w", what, err))
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, classify(fmt.Errorf("listen for %s: %w", what, err))
	}
	return &Listener{conn: conn, what: what}, nil
}

// Wait blocks until a notification arrives, ctx ends or the connection is
// lost; after an error other than ctx's the listener is useless and should
// be closed and opened again.
func (l *Listener) Wait(ctx context.Context) error {
	_, err := l.Receive(ctx)
	return err
}

// Receive is Wait that returns the notification's payload.
func (l *Listener) Receive(ctx context.Context) (string, error) {
	n, err := l.conn.WaitForNotification(ctx)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return "", ctxErr
		}
		return "", classify(fmt.Errorf("wait for %s: %w", l.what, err))
	}
	return n.Payload, nil
}

// Close ends the listener's connection.
func (l *Listener) Close(ctx context.Context) error {
	return l.conn.Close(ctx)
}

// notifyJobsSQL signals @jobs_channel (JobsChannel); PostgreSQL delivers
// it when the transaction commits.
//
//go:embed sql/notify_jobs.sql
var notifyJobsSQL string
