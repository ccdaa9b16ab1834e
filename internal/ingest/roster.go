package ingest

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/hubctl/hubctl/internal/event"
)

// roster is the cached tenant roster of the ingest gate (docs/concepts.md, Tenants). It is
// replaced whole on every refresh, so a lookup never sees half a roster.
type roster struct {
	tenants atomic.Pointer[map[string]event.TenantStatus]
}

// status answers rules 5–6 for one tenant. Before the first load every
// tenant would be unknown, which is why Run loads it before reading Kafka.
func (r *roster) status(tenantID string) event.TenantStatus {
	tenants := r.tenants.Load()
	if tenants == nil {
		return event.TenantUnknown
	}
	return (*tenants)[tenantID]
}

func (r *roster) set(tenants map[string]event.TenantStatus) { r.tenants.Store(&tenants) }

// loadRoster fills the roster, retrying until it succeeds or ctx ends. Ingest
// must not judge a single record before this: with an empty roster every
// event would be discarded as unknown_tenant, and discards are final.
func (c *Consumer) loadRoster(ctx context.Context) error {
	return c.retry(ctx, "load tenant roster", func(ctx context.Context) error {
		tenants, err := c.opts.Store.LoadRoster(ctx)
		if err != nil {
			return err
		}
		c.roster.set(tenants)
		return nil
	})
}

// refreshRoster reloads the roster every interval until ctx ends. A failed
// refresh keeps the previous roster: the batch writes of a database that
// cannot answer this fail too, so no record is judged against a roster much
// older than the database it is written to.
func (c *Consumer) refreshRoster(ctx context.Context, every time.Duration) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	failing := false // log the start and the end of a failure, not every tick
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		loadCtx, cancel := context.WithTimeout(ctx, attemptTimeout)
		tenants, err := c.opts.Store.LoadRoster(loadCtx)
		cancel()
		if err != nil {
			if ctx.Err() == nil && !failing {
				c.log.Warn("tenant roster refresh failed; keeping the previous roster until it succeeds", slog.Any("error", err))
				failing = true
			}
			continue
		}
		if failing {
			c.log.Info("tenant roster refreshed again")
			failing = false
		}
		c.roster.set(tenants)
	}
}
