package pg

import (
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A pipelined batch is read back through the callbacks set on each queued
// statement: pgx runs them in the order the statements were queued when
// the batch is closed, so a read is always paired with its own statement,
// however the batch grows or which statements are queued conditionally.
// These helpers set them, naming the statement in the error of its
// failure. Close returns the first error.

// OnExec reads q's command tag, passed to fn unless fn is nil.
func OnExec(q *pgx.QueuedQuery, what string, fn func(pgconn.CommandTag) error) {
	q.Fn = func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		if err == nil && fn != nil {
			err = fn(tag)
		}
		return stepError(what, err)
	}
}

// OnRow passes q's single row to fn; a missing row is pgx.ErrNoRows from
// its Scan.
func OnRow(q *pgx.QueuedQuery, what string, fn func(pgx.Row) error) {
	q.Fn = func(br pgx.BatchResults) error {
		return stepError(what, fn(br.QueryRow()))
	}
}

// OnRows passes q's rows to fn, which need not close them.
func OnRows(q *pgx.QueuedQuery, what string, fn func(pgx.Rows) error) {
	q.Fn = func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err == nil {
			err = fn(rows)
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
		return stepError(what, err)
	}
}

func stepError(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
