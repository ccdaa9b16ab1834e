package pg

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Listener receives the notifications of one channel. It holds a connection
// of its own, outside the pool, for as long as it lives.
type Listener struct {
	conn *pgx.Conn
	what string // what the listener waits for, for errors
}

// Listen opens a connection with pool's settings and LISTENs on channel;
// what names the wait in errors ("new jobs").
func Listen(ctx context.Context, pool *pgxpool.Pool, channel, what string) (*Listener, error) {
	conn, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, Classify(fmt.Errorf("listen for %s: %w", what, err))
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, Classify(fmt.Errorf("listen for %s: %w", what, err))
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
		return "", Classify(fmt.Errorf("wait for %s: %w", l.what, err))
	}
	return n.Payload, nil
}

// Close ends the listener's connection.
func (l *Listener) Close(ctx context.Context) error {
	return l.conn.Close(ctx)
}
