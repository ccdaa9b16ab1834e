package store

import (
	"context"
	_ "embed"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
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
func (s *Store) ListenJobs(ctx context.Context) (*pg.Listener, error) {
	return pg.Listen(ctx, s.Pool, JobsChannel, "new jobs")
}

// ListenRoster LISTENs on RosterChannel.
func (s *Store) ListenRoster(ctx context.Context) (*pg.Listener, error) {
	return pg.Listen(ctx, s.Pool, RosterChannel, "roster changes")
}

// notifyJobsSQL signals @jobs_channel (JobsChannel); PostgreSQL delivers
// it when the transaction commits.
//
//go:embed sql/notify_jobs.sql
var notifyJobsSQL string
