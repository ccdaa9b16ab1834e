// Package portal stores the portal's sign-in links and browser sessions
// (SPEC §10, migration 000018). Tokens are kept only as hashes: the store
// never sees a link's token or a session's cookie in the clear.
package portal

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// Store runs the portal's statements over the shared pool.
type Store struct {
	Pool *pgxpool.Pool
}

// New returns the portal statements over pool.
func New(pool *pgxpool.Pool) *Store { return &Store{Pool: pool} }

// NewLink is a sign-in link to store. Tenant "" is the operator console.
type NewLink struct {
	TokenHash []byte
	Tenant    string
	ReadOnly  bool
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Session is a live browser session. Tenant "" is the operator console.
type Session struct {
	ID        string
	Tenant    string
	ReadOnly  bool
	ExpiresAt time.Time
}

// NewSession is the session a redeemed link opens.
type NewSession struct {
	ID        string
	TokenHash []byte
}

// CreateLink stores a link and, on the way, removes the links and
// sessions that have expired by its creation time. A tenant that does not
// exist is pg.ErrNotFound.
func (s *Store) CreateLink(ctx context.Context, l NewLink) error {
	return pg.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		now := pgx.StrictNamedArgs{"now": l.CreatedAt}
		if _, err := tx.Exec(ctx, deleteExpiredLinksSQL, now); err != nil {
			return fmt.Errorf("delete expired portal links: %w", err)
		}
		if _, err := tx.Exec(ctx, deleteExpiredSessionsSQL, now); err != nil {
			return fmt.Errorf("delete expired portal sessions: %w", err)
		}
		var expires time.Time
		err := tx.QueryRow(ctx, insertLinkSQL, pgx.StrictNamedArgs{
			"token_hash": l.TokenHash, "tenant_id": nullable(l.Tenant), "read_only": l.ReadOnly,
			"created_at": l.CreatedAt, "expires_at": l.ExpiresAt,
		}).Scan(&expires)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: tenant %q", pg.ErrNotFound, l.Tenant)
		}
		if err != nil {
			return fmt.Errorf("store a portal link: %w", err)
		}
		return nil
	})
}

// RedeemLink spends the link whose token hashes to linkHash and opens the
// session s in its place, ending when the link would have. A link that is
// unknown, used, expired or of an inactive tenant is pg.ErrNotFound, the
// one answer for all of them, so the answer tells a guesser nothing.
func (s *Store) RedeemLink(ctx context.Context, linkHash []byte, session NewSession, now time.Time) (Session, error) {
	out, err := scanSession(s.Pool.QueryRow(ctx, redeemLinkSQL, pgx.StrictNamedArgs{
		"link_hash": linkHash, "session_id": session.ID, "session_hash": session.TokenHash, "now": now,
	}))
	if err != nil {
		return Session{}, pg.Classify(fmt.Errorf("redeem a portal link: %w", err))
	}
	return out, nil
}

// Session reads the live session whose cookie hashes to sessionHash:
// pg.ErrNotFound when there is none, it has ended or expired, or its
// tenant is inactive or gone.
func (s *Store) Session(ctx context.Context, sessionHash []byte, now time.Time) (Session, error) {
	out, err := scanSession(s.Pool.QueryRow(ctx, sessionSQL, pgx.StrictNamedArgs{"session_hash": sessionHash, "now": now}))
	if err != nil {
		return Session{}, pg.Classify(fmt.Errorf("read a portal session: %w", err))
	}
	return out, nil
}

// EndSession ends the session whose cookie hashes to sessionHash (signing
// out); ending an ended or unknown session is not an error.
func (s *Store) EndSession(ctx context.Context, sessionHash []byte, now time.Time) error {
	_, err := s.Pool.Exec(ctx, endSessionSQL, pgx.StrictNamedArgs{"session_hash": sessionHash, "now": now})
	return pg.Classify(err)
}

// EndTenantSessions ends every live session of a tenant and says how many
// it ended.
func (s *Store) EndTenantSessions(ctx context.Context, tenant string, now time.Time) (int64, error) {
	tag, err := s.Pool.Exec(ctx, endTenantSessionsSQL, pgx.StrictNamedArgs{"tenant_id": tenant, "now": now})
	if err != nil {
		return 0, pg.Classify(fmt.Errorf("end the portal sessions of tenant %q: %w", tenant, err))
	}
	return tag.RowsAffected(), nil
}

func scanSession(row pgx.Row) (Session, error) {
	var out Session
	var tenant *string
	err := row.Scan(&out.ID, &tenant, &out.ReadOnly, &out.ExpiresAt)
	if tenant != nil {
		out.Tenant = *tenant
	}
	return out, err
}

// nullable stores the operator console's "" tenant as NULL, which the
// foreign key lets through.
func nullable(tenant string) *string {
	if tenant == "" {
		return nil
	}
	return &tenant
}

//go:embed sql/insert_link.sql
var insertLinkSQL string

//go:embed sql/delete_expired_links.sql
var deleteExpiredLinksSQL string

//go:embed sql/delete_expired_sessions.sql
var deleteExpiredSessionsSQL string

//go:embed sql/redeem_link.sql
var redeemLinkSQL string

//go:embed sql/session.sql
var sessionSQL string

//go:embed sql/end_session.sql
var endSessionSQL string

//go:embed sql/end_tenant_sessions.sql
var endTenantSessionsSQL string
