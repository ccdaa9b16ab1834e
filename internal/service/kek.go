package service

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// defaultKEKBatch is how many subscription rows one read of a re-encryption
// pass takes: small enough that a pass never holds much in memory, large
// enough that a hub with a hundred thousand subscriptions takes seconds.
const defaultKEKBatch = 500

// raceRetries bounds how often one row is read again after a concurrent
// change won the compare-and-set. Each lost race means someone else wrote
// the row, under the active key if their keyring is the same as ours.
const raceRetries = 3

// KEK moves the secrets the hub stores from one key-encryption key to
// another: Status shows which keys the stored envelopes are under, and
// Reencrypt seals every one under the active key. It works on the database
// directly, with the keyring of the process running it (see
// docs/operating.md, "Rotating the key-encryption key").
type KEK struct {
	store *catalog.Store
	keys  *crypto.Keyring
}

// NewKEK returns the key-encryption key use cases; keys is the keyring to
// decrypt with, its active key the one to seal under.
func NewKEK(st *catalog.Store, keys *crypto.Keyring) *KEK {
	return &KEK{store: st, keys: keys}
}

// KEKStatus counts the stored envelopes by the key they are sealed under.
type KEKStatus struct {
	ActiveKeyID string `json:"active_key_id" yaml:"active_key_id"`
	// Envelopes maps each key id found to the number of envelopes under it.
	Envelopes map[string]int `json:"envelopes" yaml:"envelopes"`
	// Malformed counts stored values that are not envelopes at all.
	Malformed int `json:"malformed" yaml:"malformed"`
	// Outdated counts the envelopes under a key other than the active one,
	// malformed ones included: zero means the older keys can leave the
	// keyring.
	Outdated int `json:"outdated" yaml:"outdated"`
}

// Status reads every envelope's key id; it decrypts nothing.
func (k *KEK) Status(ctx context.Context) (KEKStatus, error) {
	status := KEKStatus{ActiveKeyID: k.keys.ActiveKeyID(), Envelopes: map[string]int{}}
	err := k.walk(ctx, defaultKEKBatch, func(row catalog.SealedSecrets) error {
		for _, f := range sealedFields(&row) {
			if *f.value == "" {
				continue
			}
			id, err := crypto.EnvelopeKeyID(*f.value)
			if err != nil {
				status.Malformed++
				continue
			}
			status.Envelopes[id]++
			if id != status.ActiveKeyID {
				status.Outdated++
			}
		}
		return nil
	})
	status.Outdated += status.Malformed
	return status, err
}

// ReencryptOptions tune a re-encryption pass.
type ReencryptOptions struct {
	// DryRun decrypts every envelope (proving the keyring can) and counts
	// what would be rewritten, writing nothing.
	DryRun bool
	// BatchSize is the number of rows read at a time; zero takes the
	// default.
	BatchSize int
}

// ReencryptResult is what a pass did.
type ReencryptResult struct {
	ActiveKeyID string `json:"active_key_id" yaml:"active_key_id"`
	DryRun      bool   `json:"dry_run" yaml:"dry_run"`
	// Examined counts the envelopes read; Reencrypted those sealed again
	// under the active key (or that would be, in a dry run); Current those
	// already under it.
	Examined    int `json:"examined" yaml:"examined"`
	Reencrypted int `json:"reencrypted" yaml:"reencrypted"`
	Current     int `json:"current" yaml:"current"`
	// Failed lists the envelopes the keyring cannot open, left as they were.
	Failed []ReencryptFailure `json:"failed" yaml:"failed"`
}

// ReencryptFailure names one envelope that could not be re-encrypted, and
// why; the reason never contains key or secret material.
type ReencryptFailure struct {
	SubscriptionID string `json:"subscription_id" yaml:"subscription_id"`
	Column         string `json:"column" yaml:"column"`
	Reason         string `json:"reason" yaml:"reason"`
}

// Reencrypt seals every stored envelope under the keyring's active key.
// Each row is rewritten only if it still holds what was read, so a secret
// rotated or a subscription updated meanwhile is never overwritten with an
// older value. Rows with an envelope the keyring cannot open keep that
// envelope (their other envelopes are still moved) and are listed in
// Failed. Running it again is harmless: current envelopes are left alone.
func (k *KEK) Reencrypt(ctx context.Context, opts ReencryptOptions) (ReencryptResult, error) {
	result := ReencryptResult{ActiveKeyID: k.keys.ActiveKeyID(), DryRun: opts.DryRun, Failed: []ReencryptFailure{}}
	batch := opts.BatchSize
	if batch <= 0 {
		batch = defaultKEKBatch
	}
	err := k.walk(ctx, batch, func(row catalog.SealedSecrets) error {
		return k.reencryptRow(ctx, row, opts.DryRun, &result)
	})
	sort.Slice(result.Failed, func(i, j int) bool {
		a, b := result.Failed[i], result.Failed[j]
		return a.SubscriptionID < b.SubscriptionID || a.SubscriptionID == b.SubscriptionID && a.Column < b.Column
	})
	return result, err
}

func (k *KEK) reencryptRow(ctx context.Context, row catalog.SealedSecrets, dryRun bool, result *ReencryptResult) error {
	for attempt := 0; ; attempt++ {
		next, tally := k.reseal(row)
		if tally.changed == 0 || dryRun {
			result.add(tally)
			return nil
		}
		written, err := k.store.ReplaceSealedSecrets(ctx, row, next)
		if err != nil {
			return err
		}
		if written {
			result.add(tally)
			return nil
		}
		if attempt == raceRetries {
			return fmt.Errorf("subscription %s kept changing during re-encryption; run it again", row.ID)
		}
		row, err = k.store.SealedSecretsOf(ctx, row.ID)
		if errors.Is(err, pg.ErrNotFound) {
			return nil // deleted meanwhile: nothing left to protect
		}
		if err != nil {
			return err
		}
	}
}

// rowTally is what resealing one row found.
type rowTally struct {
	examined, changed, current int
	failed                     []ReencryptFailure
}

func (r *ReencryptResult) add(t rowTally) {
	r.Examined += t.examined
	r.Reencrypted += t.changed
	r.Current += t.current
	r.Failed = append(r.Failed, t.failed...)
}

// reseal computes the row's envelopes under the active key.
func (k *KEK) reseal(row catalog.SealedSecrets) (catalog.SealedSecrets, rowTally) {
	next := row
	var t rowTally
	for _, f := range sealedFields(&next) {
		if *f.value == "" {
			continue
		}
		t.examined++
		sealed, changed, err := k.keys.Reencrypt(*f.value, row.ID.String(), f.column)
		switch {
		case err != nil:
			t.failed = append(t.failed, ReencryptFailure{SubscriptionID: row.ID.String(), Column: f.column, Reason: err.Error()})
		case changed:
			*f.value = sealed
			t.changed++
		default:
			t.current++
		}
	}
	return next, t
}

type sealedField struct {
	column string
	value  *string
}

// sealedFields lists a row's envelope columns with the names their
// envelopes are bound to.
func sealedFields(row *catalog.SealedSecrets) []sealedField {
	return []sealedField{
		{catalog.ColumnSinkCredentials, &row.SinkCredentials},
		{catalog.ColumnSigningSecret, &row.SigningSecret},
		{catalog.ColumnPreviousSecret, &row.PreviousSecret},
	}
}

// walk calls fn for every row holding an envelope, in id order.
func (k *KEK) walk(ctx context.Context, batch int, fn func(catalog.SealedSecrets) error) error {
	after := uuid.Nil
	for {
		page, err := k.store.SealedSecretsPage(ctx, after, batch)
		if err != nil {
			return err
		}
		for _, row := range page {
			if err := fn(row); err != nil {
				return err
			}
		}
		if len(page) < batch {
			return nil
		}
		after = page[len(page)-1].ID
	}
}
