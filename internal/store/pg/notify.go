package pg

import (
	"context"
	_ "embed"

	"github.com/jackc/pgx/v5"
)

// JobsChannel is the PostgreSQL notification channel a transaction that
// created or revived delivery jobs signals at commit: dispatch workers
// LISTEN on it to wake without polling. The payload is empty.
const JobsChannel = "hubctl_jobs"

// RosterChannel is the notification channel every change to the tenants
// table signals at commit (a trigger of migration 000002), whoever made it:
// the API, the CLI in direct mode, tenants purge, or SQL by hand. Ingest
// LISTENs on it to reload its roster at once.
const RosterChannel = "hubctl_roster"

// QueueJobsNotify signals JobsChannel from the transaction pipe belongs to.
// PostgreSQL delivers it at commit, and only then: a worker woken by it sees
// the jobs.
func QueueJobsNotify(pipe *pgx.Batch) {
	pipe.Queue(notifyJobsSQL, pgx.StrictNamedArgs{"jobs_channel": JobsChannel})
}

// NotifyJobs is QueueJobsNotify for a transaction that is not pipelining.
func NotifyJobs(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, notifyJobsSQL, pgx.StrictNamedArgs{"jobs_channel": JobsChannel})
	return err
}

// notifyJobsSQL signals @jobs_channel (JobsChannel); PostgreSQL delivers
// it when the transaction commits.
//
//go:embed sql/notify_jobs.sql
var notifyJobsSQL string
