package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/event"
)

// RosterChannel is the notification channel every change to the tenants
// table signals at commit (a trigger of migration 000002), whoever made it:
// the API, the CLI in direct mode, or SQL by hand.
const RosterChannel = "hubctl_roster"

// Listener receives the notifications of one channel. It holds a connection
// of its own, outside the pool, for as long as it lives.
type Listener struct {
	conn *pgx.Conn
	what string // what the listener waits for, for errors
}

// Listen opens a connection with the pool's settings and LISTENs on
// channel; what names the wait in errors ("roster changes").
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
	_, err := l.conn.WaitForNotification(ctx)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return ctxErr
		}
		return classify(fmt.Errorf("wait for %s: %w", l.what, err))
	}
	return nil
}

// Close ends the listener's connection.
func (l *Listener) Close(ctx context.Context) error {
	return l.conn.Close(ctx)
}

// TenantStatuses answers the roster gate for a few tenants straight from
// the database; a tenant not in the answer is unknown. Ingest asks it
// before discarding a record for its tenant, the one verdict a stale
// roster could make wrongly and for good.
func (s *Store) TenantStatuses(ctx context.Context, ids []string) (map[string]event.TenantStatus, error) {
	rows, err := s.Pool.Query(ctx, `SELECT id, status FROM tenants WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, classify(fmt.Errorf("read tenant statuses: %w", err))
	}
	statuses := make(map[string]event.TenantStatus, len(ids))
	var id, status string
	_, err = pgx.ForEachRow(rows, []any{&id, &status}, func() error {
		statuses[id] = tenantStatus(status)
		return nil
	})
	if err != nil {
		return nil, classify(fmt.Errorf("read tenant statuses: %w", err))
	}
	return statuses, nil
}

func tenantStatus(status string) event.TenantStatus {
	if status == "active" {
		return event.TenantActive
	}
	return event.TenantInactive
}
