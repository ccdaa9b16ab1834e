package catalog

import (
	"context"
	_ "embed"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// SealedSecrets are the envelopes one subscription row holds, by column;
// "" stands for NULL. Re-encryption under a new key-encryption key reads and
// rewrites them and nothing else.
type SealedSecrets struct {
	ID              uuid.UUID
	SinkCredentials string
	SigningSecret   string
	PreviousSecret  string
}

// SealedSecretsPage returns up to limit rows holding at least one envelope,
// with ids after after, in id order: a walk that a concurrent insert cannot
// make skip or repeat a row. Soft-deleted rows hold none.
func (s *Store) SealedSecretsPage(ctx context.Context, after uuid.UUID, limit int) ([]SealedSecrets, error) {
	rows, err := s.Pool.Query(ctx, sealedSecretsPageSQL,
		pgx.NamedArgs{"after": after, "limit": limit})
	if err != nil {
		return nil, pg.Classify(err)
	}
	page, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (SealedSecrets, error) {
		var row SealedSecrets
		err := r.Scan(&row.ID, &row.SinkCredentials, &row.SigningSecret, &row.PreviousSecret)
		return row, err
	})
	return page, pg.Classify(err)
}

// ReplaceSealedSecrets writes next's envelopes over the row's, but only if
// the row still holds exactly was's: a rotation or update that ran since the
// read wins, and the caller reads the row again. It reports whether it
// wrote. updated_at stays as it was: the secrets' plaintext has not changed,
// so nothing cached from the row is stale, and the subscription has not
// changed for its owner either.
func (s *Store) ReplaceSealedSecrets(ctx context.Context, was, next SealedSecrets) (bool, error) {
	tag, err := s.Pool.Exec(ctx, replaceSealedSecretsSQL,
		pgx.NamedArgs{
			"id":               was.ID,
			"next_credentials": next.SinkCredentials,
			"next_signing":     next.SigningSecret,
			"next_previous":    next.PreviousSecret,
			"was_credentials":  was.SinkCredentials,
			"was_signing":      was.SigningSecret,
			"was_previous":     was.PreviousSecret,
		})
	if err != nil {
		return false, pg.Classify(err)
	}
	return tag.RowsAffected() == 1, nil
}

// SealedSecretsOf reads one row's envelopes again, after a lost race; a row
// deleted meanwhile is pg.ErrNotFound.
func (s *Store) SealedSecretsOf(ctx context.Context, id uuid.UUID) (SealedSecrets, error) {
	row := SealedSecrets{ID: id}
	err := s.Pool.QueryRow(ctx, sealedSecretsOfSQL, pgx.NamedArgs{"id": id}).
		Scan(&row.SinkCredentials, &row.SigningSecret, &row.PreviousSecret)
	if errors.Is(err, pgx.ErrNoRows) {
		return row, pg.SubscriptionNotFound(id)
	}
	return row, pg.Classify(err)
}

//go:embed sql/sealed_secrets_page.sql
var sealedSecretsPageSQL string

//go:embed sql/replace_sealed_secrets.sql
var replaceSealedSecretsSQL string

//go:embed sql/sealed_secrets_of.sql
var sealedSecretsOfSQL string
