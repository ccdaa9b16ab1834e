package catalog

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hubctl/hubctl/internal/routing"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// Columns that hold crypto envelopes. Each envelope is bound to its row id
// and to the column's name (docs/concepts.md, Secrets at rest), so these names are the field half of
// the additional data and must never change.
const (
	ColumnSinkCredentials = "sink_credentials"
	ColumnSigningSecret   = "signing_secret"
	ColumnPreviousSecret  = "previous_secret"
)

// Subscription is one live row of subscriptions. Fields that may hold a
// secret hold crypto envelopes, never plaintext; "" and nil stand for NULL.
type Subscription struct {
	ID       uuid.UUID
	TenantID string
	Name     string
	SinkType string
	// SinkConfig is the part of the sink configuration reads may show.
	SinkConfig json.RawMessage
	// SinkCredentials is the envelope of the credentials object, "" when
	// the sink has none; SinkCredentialFields are its top-level keys.
	SinkCredentials      string
	SinkCredentialFields []string
	Destination          string
	EventTypes           []string
	SchemaMajor          int
	Origin               string
	// Filter is the CEL expression events must satisfy; "" matches all.
	Filter string
	// Ordering is the ordering mode (match.Orderings); "" is none.
	Ordering string
	// RateLimit is the ceiling in deliveries per second; 0 is none.
	RateLimit float64
	// RetrySchedule holds Go durations as the user wrote them; nil means
	// the default curve.
	RetrySchedule     []string
	AttemptTimeout    time.Duration
	Enabled           bool
	VerificationState string
	VerificationError string
	VerifiedAt        *time.Time
	DisabledReason    string
	FailingSince      *time.Time
	LastFailureAt     *time.Time
	// SigningSecret and PreviousSecret are envelopes (webhooks only).
	SigningSecret           string
	PreviousSecret          string
	PreviousSecretExpiresAt *time.Time
	// SignatureScheme is how the current secret signs; "" is stored as the
	// schema's default, "lerian". PreviousSignatureScheme is how the
	// previous secret signs during its overlap, "" for the same scheme.
	SignatureScheme         string
	PreviousSignatureScheme string
	CreatedAt               time.Time
	// UpdatedAt is the row's version. Every statement that changes the
	// row sets it to greatest(the change's time, UpdatedAt + 1µs): dispatch
	// tells versions apart by UpdatedAt alone (a cached sink or row is
	// reused while its version is not older than the claim's), so a change
	// stamped by a process whose clock runs behind must still count as
	// newer.
	UpdatedAt time.Time
}

// defaultSignatureScheme is the schema's default signature_scheme.
const defaultSignatureScheme = "lerian"

func signatureScheme(scheme string) string {
	if scheme == "" {
		return defaultSignatureScheme
	}
	return scheme
}

// SubscriptionPosition is where a page of subscriptions ends: listings run
// in (created_at, id) order.
type SubscriptionPosition struct {
	CreatedAt time.Time
	ID        uuid.UUID
}

func scanSubscription(row pgx.Row) (Subscription, error) {
	var (
		s                                                              Subscription
		config                                                         []byte
		credentials, origin, verificationError, disabledReason, secret *string
		previous, filter, previousScheme                               *string
		timeoutMillis                                                  int64
	)
	err := row.Scan(&s.ID, &s.TenantID, &s.Name, &s.SinkType, &config, &credentials, &s.SinkCredentialFields,
		&s.Destination, &s.EventTypes, &s.SchemaMajor, &origin, &s.RetrySchedule, &timeoutMillis, &s.Enabled,
		&s.VerificationState, &verificationError, &s.VerifiedAt, &disabledReason, &s.FailingSince, &s.LastFailureAt,
		&secret, &previous, &s.PreviousSecretExpiresAt, &s.CreatedAt, &s.UpdatedAt, &filter,
		&s.SignatureScheme, &previousScheme, &s.Ordering, &s.RateLimit)
	if err != nil {
		return Subscription{}, err
	}
	s.SinkConfig = config
	s.SinkCredentials = pg.ValueOrZero(credentials)
	s.Origin = pg.ValueOrZero(origin)
	s.Filter = pg.ValueOrZero(filter)
	if s.Ordering == routing.OrderingNone {
		s.Ordering = ""
	}
	s.AttemptTimeout = time.Duration(timeoutMillis) * time.Millisecond
	s.VerificationError = pg.ValueOrZero(verificationError)
	s.DisabledReason = pg.ValueOrZero(disabledReason)
	s.SigningSecret = pg.ValueOrZero(secret)
	s.PreviousSecret = pg.ValueOrZero(previous)
	s.PreviousSignatureScheme = pg.ValueOrZero(previousScheme)
	return s, nil
}

func orderingOrNone(mode string) string {
	if mode == "" {
		return routing.OrderingNone
	}
	return mode
}

// resetRateLimiter starts a subscription's limiter afresh when its
// rate_limit changes: the slots granted at the old rate are forgotten and
// the jobs waiting for one are due at once, to be given slots at the new
// rate by their next claim (docs/concepts.md, Rate limits).
func resetRateLimiter(ctx context.Context, tx pgx.Tx, id uuid.UUID) error {
	if _, err := tx.Exec(ctx, deleteRateLimiterSQL, pgx.StrictNamedArgs{"id": id}); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, unholdRateLimitedJobsSQL, pgx.StrictNamedArgs{"id": id, "shed_rate_limited": pg.ShedRateLimited})
	return err
}

// SubscriptionLimitError refuses a subscription past the most a tenant
// may have (STREAMING_HUB_MAX_SUBSCRIPTIONS_PER_TENANT). It matches
// pg.ErrConflict: the request clashes with what the tenant already has.
type SubscriptionLimitError struct {
	TenantID string
	Limit    int
}

func (e *SubscriptionLimitError) Error() string {
	return fmt.Sprintf("tenant %q already has %d subscriptions, the most allowed", e.TenantID, e.Limit)
}

func (e *SubscriptionLimitError) Is(target error) bool { return target == pg.ErrConflict }

// CreateSubscription inserts sub as given, stamped created and updated at
// sub.CreatedAt, and gives a pull subscription its cursor in the same
// transaction. An unknown tenant is an pg.ErrNotFound naming the tenant (the
// only pg.ErrNotFound this method returns). When the tenant already has
// limit live subscriptions (deleted ones do not count) it is a
// *SubscriptionLimitError; limit 0 is no cap.
func (s *Store) CreateSubscription(ctx context.Context, sub Subscription, limit int) (Subscription, error) {
	return s.CreateSubscriptionReported(ctx, sub, limit, nil)
}

// Report writes, in the transaction of a change to a subscription, how the
// change is reported (operational events, docs/operational-events.md):
// before is the row as it was, zero for a create; after is the row as it
// is now, zero for a delete. It runs only when the row changed, and its
// error rolls the change back. A transaction that reports takes the ingest
// lock shared before it locks the row (pg.ShareIngestLock).
type Report func(ctx context.Context, tx pgx.Tx, before, after Subscription) error

// CreateSubscriptionReported is CreateSubscription with its report, nil
// for none.
func (s *Store) CreateSubscriptionReported(ctx context.Context, sub Subscription, limit int, report Report) (Subscription, error) {
	var created Subscription
	err := pg.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		if report != nil {
			if err := pg.ShareIngestLock(ctx, tx); err != nil {
				return err
			}
		}
		if limit > 0 {
			if err := checkSubscriptionLimit(ctx, tx, sub.TenantID, limit); err != nil {
				return err
			}
		}
		var err error
		created, err = scanSubscription(tx.QueryRow(ctx, insertSubscriptionSQL,
			pgx.StrictNamedArgs{"id": sub.ID, "tenant_id": sub.TenantID, "name": sub.Name, "sink_type": sub.SinkType, "sink_config": []byte(sub.SinkConfig), "sink_credentials": pg.NullIfZero(sub.SinkCredentials), "sink_credential_fields": nonNil(sub.SinkCredentialFields), "destination": sub.Destination, "event_types": sub.EventTypes, "schema_major": sub.SchemaMajor, "origin": pg.NullIfZero(sub.Origin), "retry_schedule": sub.RetrySchedule, "attempt_timeout_ms": sub.AttemptTimeout.Milliseconds(), "enabled": sub.Enabled, "verification_state": sub.VerificationState, "verification_error": pg.NullIfZero(sub.VerificationError), "verified_at": sub.VerifiedAt, "signing_secret": pg.NullIfZero(sub.SigningSecret), "previous_secret": pg.NullIfZero(sub.PreviousSecret), "previous_secret_expires_at": sub.PreviousSecretExpiresAt, "created_at": sub.CreatedAt, "filter": pg.NullIfZero(sub.Filter), "signature_scheme": signatureScheme(sub.SignatureScheme), "previous_signature_scheme": pg.NullIfZero(sub.PreviousSignatureScheme), "ordering": orderingOrNone(sub.Ordering), "rate_limit": pg.NullIfZero(sub.RateLimit)}))
		if err != nil {
			return err
		}
		if sub.SinkType == pg.PullSinkType {
			if _, err = tx.Exec(ctx, insertPullCursorSQL, pgx.StrictNamedArgs{"id": sub.ID, "created_at": sub.CreatedAt}); err != nil {
				return err
			}
		}
		if report == nil {
			return nil
		}
		return report(ctx, tx, Subscription{}, created)
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" { // foreign_key_violation: tenants is the only parent
		return Subscription{}, pg.TenantNotFound(sub.TenantID)
	}
	if err != nil {
		return Subscription{}, pg.Classify(fmt.Errorf("create subscription: %w", err))
	}
	return created, nil
}

// checkSubscriptionLimit refuses a tenant's subscription past limit. The
// tenant's row stays locked until the transaction ends, so concurrent
// creates, from this process or another, count one after the other and
// never overshoot. The count is its own statement: under READ COMMITTED it
// then sees what the creates it waited for committed. FOR NO KEY UPDATE
// leaves the row's key shareable, so inserts elsewhere that reference the
// tenant do not wait.
func checkSubscriptionLimit(ctx context.Context, tx pgx.Tx, tenantID string, limit int) error {
	var locked bool
	err := tx.QueryRow(ctx, lockTenantForLimitSQL, pgx.StrictNamedArgs{"tenant_id": tenantID}).Scan(&locked)
	if errors.Is(err, pgx.ErrNoRows) {
		return pg.TenantNotFound(tenantID)
	}
	if err != nil {
		return err
	}
	var live int
	if err := tx.QueryRow(ctx, countLiveSubscriptionsSQL,
		pgx.StrictNamedArgs{"tenant_id": tenantID}).Scan(&live); err != nil {
		return err
	}
	if live >= limit {
		return &SubscriptionLimitError{TenantID: tenantID, Limit: limit}
	}
	return nil
}

// nonNil keeps a NOT NULL array column from receiving NULL.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// GetSubscription reads one live subscription of tenantID. A deleted one,
// and one of another tenant, are pg.ErrNotFound exactly like a missing one.
func (s *Store) GetSubscription(ctx context.Context, tenantID string, id uuid.UUID) (Subscription, error) {
	sub, err := scanSubscription(s.Pool.QueryRow(ctx, getSubscriptionSQL,
		pgx.StrictNamedArgs{"id": id, "tenant_id": tenantID}))
	if errors.Is(err, pgx.ErrNoRows) {
		return Subscription{}, pg.SubscriptionNotFound(id)
	}
	if err != nil {
		return Subscription{}, pg.Classify(fmt.Errorf("read subscription %s: %w", id, err))
	}
	return sub, nil
}

// SubscriptionsByID reads the rows of ids whatever their tenant or state,
// deleted ones included, secrets still sealed: dispatch's view of the
// subscriptions its claimed jobs belong to. Ids without a row are left out.
func (s *Store) SubscriptionsByID(ctx context.Context, ids []uuid.UUID) ([]Subscription, error) {
	rows, err := s.Pool.Query(ctx, subscriptionsByIDSQL, pgx.StrictNamedArgs{"ids": ids})
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("read %d subscriptions: %w", len(ids), err))
	}
	subs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Subscription, error) { return scanSubscription(row) })
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("read %d subscriptions: %w", len(ids), err))
	}
	return subs, nil
}

// ListSubscriptions returns up to limit live subscriptions of tenantID in
// (created_at, id) order, starting after `after` (nil starts at the
// beginning). more reports whether subscriptions follow the last one.
func (s *Store) ListSubscriptions(ctx context.Context, tenantID string, after *SubscriptionPosition, limit int) (subs []Subscription, more bool, err error) {
	if limit < 1 {
		return nil, false, fmt.Errorf("list subscriptions: limit %d must be at least 1", limit)
	}
	// A row-value comparison walks subscriptions_by_tenant from the
	// position; one extra row tells whether another page exists.
	query, args := listSubscriptionsSQL, pgx.StrictNamedArgs{"tenant_id": tenantID, "limit": limit + 1}
	if after != nil {
		query = listSubscriptionsAfterSQL
		args["after_created_at"], args["after_id"] = after.CreatedAt, after.ID
	}
	rows, err := s.Pool.Query(ctx, query, args)
	if err != nil {
		return nil, false, pg.Classify(fmt.Errorf("list subscriptions: %w", err))
	}
	subs, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Subscription, error) { return scanSubscription(r) })
	if err != nil {
		return nil, false, pg.Classify(fmt.Errorf("list subscriptions: %w", err))
	}
	if len(subs) > limit {
		return subs[:limit], true, nil
	}
	return subs, false, nil
}

// UpdateSubscription changes one live subscription of tenantID: it locks the
// row, lets change edit a copy, and writes the copy back in the same
// transaction, so concurrent changes (a PATCH, a rotation, dispatch's
// failure bookkeeping) never overwrite each other. An error from change
// aborts the update and is returned as it is.
//
// change may edit everything except ID, TenantID, SinkType, CreatedAt and
// UpdatedAt, which are not written back: a sink type is fixed for life
// because pull cursors and signing secrets hang off it. updated_at becomes
// `at` only when change altered something.
func (s *Store) UpdateSubscription(ctx context.Context, tenantID string, id uuid.UUID, at time.Time, change func(*Subscription) error) (Subscription, error) {
	return s.UpdateSubscriptionReported(ctx, tenantID, id, at, change, nil)
}

// UpdateSubscriptionReported is UpdateSubscription with its report, nil
// for none.
func (s *Store) UpdateSubscriptionReported(ctx context.Context, tenantID string, id uuid.UUID, at time.Time, change func(*Subscription) error, report Report) (Subscription, error) {
	var updated Subscription
	var changeErr error
	err := pg.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		if report != nil {
			if err := pg.ShareIngestLock(ctx, tx); err != nil {
				return err
			}
		}
		current, err := scanSubscription(tx.QueryRow(ctx, lockSubscriptionSQL,
			pgx.StrictNamedArgs{"id": id, "tenant_id": tenantID}))
		if errors.Is(err, pgx.ErrNoRows) {
			return pg.SubscriptionNotFound(id)
		}
		if err != nil {
			return err
		}
		next := cloneSubscription(current)
		if changeErr = change(&next); changeErr != nil {
			return changeErr
		}
		if reflect.DeepEqual(next, current) {
			updated = current
			return nil
		}
		updated, err = scanSubscription(tx.QueryRow(ctx, updateSubscriptionRowSQL,
			pgx.StrictNamedArgs{"id": id, "name": next.Name, "sink_config": []byte(next.SinkConfig), "sink_credentials": pg.NullIfZero(next.SinkCredentials), "sink_credential_fields": nonNil(next.SinkCredentialFields), "destination": next.Destination, "event_types": next.EventTypes, "schema_major": next.SchemaMajor, "origin": pg.NullIfZero(next.Origin), "retry_schedule": next.RetrySchedule, "attempt_timeout_ms": next.AttemptTimeout.Milliseconds(), "enabled": next.Enabled, "verification_state": next.VerificationState, "verification_error": pg.NullIfZero(next.VerificationError), "verified_at": next.VerifiedAt, "disabled_reason": pg.NullIfZero(next.DisabledReason), "failing_since": next.FailingSince, "last_failure_at": next.LastFailureAt, "signing_secret": pg.NullIfZero(next.SigningSecret), "previous_secret": pg.NullIfZero(next.PreviousSecret), "previous_secret_expires_at": next.PreviousSecretExpiresAt, "at": at, "filter": pg.NullIfZero(next.Filter), "signature_scheme": signatureScheme(next.SignatureScheme), "previous_signature_scheme": pg.NullIfZero(next.PreviousSignatureScheme), "ordering": orderingOrNone(next.Ordering), "rate_limit": pg.NullIfZero(next.RateLimit)}))
		if err != nil {
			return err
		}
		if current.Destination != next.Destination || (current.Enabled && !next.Enabled) {
			if err := forgetUnusedBreakers(ctx, tx, current.TenantID, current.Destination); err != nil {
				return err
			}
		}
		if next.RateLimit != current.RateLimit {
			if err := resetRateLimiter(ctx, tx, id); err != nil {
				return err
			}
		}
		if report == nil {
			return nil
		}
		return report(ctx, tx, current, updated)
	})
	switch {
	case changeErr != nil:
		return Subscription{}, changeErr
	case errors.Is(err, pg.ErrNotFound):
		return Subscription{}, err
	case err != nil:
		return Subscription{}, pg.Classify(fmt.Errorf("update subscription %s: %w", id, err))
	}
	return updated, nil
}

// cloneSubscription copies the slices and pointers of sub, so that change
// cannot alter the row it is compared against.
func cloneSubscription(sub Subscription) Subscription {
	c := sub
	c.SinkConfig = append(json.RawMessage(nil), sub.SinkConfig...)
	c.SinkCredentialFields = cloneStrings(sub.SinkCredentialFields)
	c.EventTypes = cloneStrings(sub.EventTypes)
	c.RetrySchedule = cloneStrings(sub.RetrySchedule)
	c.VerifiedAt = cloneTime(sub.VerifiedAt)
	c.FailingSince = cloneTime(sub.FailingSince)
	c.LastFailureAt = cloneTime(sub.LastFailureAt)
	c.PreviousSecretExpiresAt = cloneTime(sub.PreviousSecretExpiresAt)
	return c
}

// cloneStrings keeps nil apart from empty: a nil retry schedule means NULL.
func cloneStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string{}, s...)
}

func cloneTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// DeleteSubscription soft-deletes one live subscription of tenantID at `at`
// and, in the same transaction, cancels its pending delivery jobs, returning
// how many. Jobs in flight finish their current attempt. The row's secrets
// and credentials are erased: a deleted subscription never delivers again,
// so keeping them would only keep something to leak.
func (s *Store) DeleteSubscription(ctx context.Context, tenantID string, id uuid.UUID, at time.Time) (canceledJobs int64, err error) {
	return s.DeleteSubscriptionReported(ctx, tenantID, id, at, nil)
}

// DeleteSubscriptionReported is DeleteSubscription with its report, nil
// for none; the report's before holds the deleted row's id, tenant, name
// and destination.
func (s *Store) DeleteSubscriptionReported(ctx context.Context, tenantID string, id uuid.UUID, at time.Time, report Report) (canceledJobs int64, err error) {
	err = pg.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		if report != nil {
			if err := pg.ShareIngestLock(ctx, tx); err != nil {
				return err
			}
		}
		var destination, name string
		err := tx.QueryRow(ctx, markSubscriptionDeletedSQL,
			pgx.StrictNamedArgs{"id": id, "tenant_id": tenantID, "at": at}).Scan(&destination, &name)
		if errors.Is(err, pgx.ErrNoRows) {
			return pg.SubscriptionNotFound(id)
		}
		if err != nil {
			return err
		}
		if err := forgetUnusedBreakers(ctx, tx, tenantID, destination); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, cancelSubscriptionJobsSQL,
			pgx.StrictNamedArgs{"id": id, "at": at})
		canceledJobs = tag.RowsAffected()
		if err != nil || report == nil {
			return err
		}
		return report(ctx, tx, Subscription{ID: id, TenantID: tenantID, Name: name, Destination: destination}, Subscription{})
	})
	if errors.Is(err, pg.ErrNotFound) {
		return 0, err
	}
	if err != nil {
		return 0, pg.Classify(fmt.Errorf("delete subscription %s: %w", id, err))
	}
	return canceledJobs, nil
}

//go:embed sql/delete_rate_limiter.sql
var deleteRateLimiterSQL string

//go:embed sql/unhold_rate_limited_jobs.sql
var unholdRateLimitedJobsSQL string

//go:embed sql/insert_subscription.sql
var insertSubscriptionSQL string

//go:embed sql/insert_pull_cursor.sql
var insertPullCursorSQL string

//go:embed sql/lock_tenant_for_limit.sql
var lockTenantForLimitSQL string

//go:embed sql/count_live_subscriptions.sql
var countLiveSubscriptionsSQL string

//go:embed sql/get_subscription.sql
var getSubscriptionSQL string

//go:embed sql/subscriptions_by_id.sql
var subscriptionsByIDSQL string

//go:embed sql/list_subscriptions.sql
var listSubscriptionsSQL string

//go:embed sql/list_subscriptions_after.sql
var listSubscriptionsAfterSQL string

//go:embed sql/lock_subscription.sql
var lockSubscriptionSQL string

//go:embed sql/update_subscription_row.sql
var updateSubscriptionRowSQL string

//go:embed sql/mark_subscription_deleted.sql
var markSubscriptionDeletedSQL string

//go:embed sql/cancel_subscription_jobs.sql
var cancelSubscriptionJobsSQL string

// forgetUnusedBreakers removes the stored breakers of a tenant's
// destination once no enabled, live subscription delivers to it, so that
// `hubctl top` and `subs get` stop showing them at once rather than at
// every process's next heartbeat.
func forgetUnusedBreakers(ctx context.Context, tx pgx.Tx, tenantID, destination string) error {
	if _, err := tx.Exec(ctx, forgetUnusedBreakersSQL,
		pgx.StrictNamedArgs{"tenant_id": tenantID, "destination": destination}); err != nil {
		return fmt.Errorf("forget the breakers of %s: %w", destination, err)
	}
	return nil
}

//go:embed sql/forget_unused_breakers.sql
var forgetUnusedBreakersSQL string
