package ingest

import (
	"context"
	"log/slog"
	"maps"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/hubctl/hubctl/internal/backoff"
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

// update records the database's answer about the tenants ids (absent from
// statuses: unknown). The roster is copied only when the answer changes
// it, so a stream of records of a tenant that does not exist costs no copy.
func (r *roster) update(ids []string, statuses map[string]event.TenantStatus) {
	for {
		old := r.tenants.Load()
		var current map[string]event.TenantStatus
		if old != nil {
			current = *old
		}
		changed := false
		for _, id := range ids {
			if current[id] != statuses[id] {
				changed = true
				break
			}
		}
		if !changed {
			return
		}
		next := maps.Clone(current)
		if next == nil {
			next = make(map[string]event.TenantStatus, len(ids))
		}
		for _, id := range ids {
			if status, ok := statuses[id]; ok {
				next[id] = status
			} else {
				delete(next, id)
			}
		}
		// A whole reload may have landed meanwhile; it is as new as
		// this answer, so either may win, but neither is lost halfway.
		if r.tenants.CompareAndSwap(old, &next) {
			return
		}
	}
}

// loadRoster fills the roster, retrying until it succeeds or ctx ends. Ingest
// must not judge a single record before this: with an empty roster every
// event would be discarded as unknown_tenant, and discards are final.
func (c *Consumer) loadRoster(ctx context.Context) error {
	return c.retry(ctx, "load tenant roster", func(ctx context.Context) error {
		tenants, err := c.opts.Catalog.LoadRoster(ctx)
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
		tenants, err := c.opts.Catalog.LoadRoster(loadCtx)
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

// watchRoster reloads the roster as soon as the database announces a change
// (every write to the tenants table notifies pg.RosterChannel at commit),
// so a tenant created or activated a moment ago is known to every instance
// before its first events arrive. The periodic refresh stays as the fallback
// for a lost connection; a reconnect reloads at once, since changes may have
// been made while nobody listened.
func (c *Consumer) watchRoster(ctx context.Context) {
	failures := 0
	for ctx.Err() == nil {
		l, err := c.opts.Catalog.ListenRoster(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if failures == 0 {
				c.log.Warn("cannot listen for roster changes; the periodic refresh applies them meanwhile", slog.Any("error", err))
			}
			backoff.Sleep(ctx, retryBackoff.Delay(failures, rand.Float64()))
			failures++
			continue
		}
		if failures > 0 {
			c.log.Info("listening for roster changes again")
		}
		failures = 0
		for {
			c.reloadRoster(ctx)
			if err = l.Wait(ctx); err != nil {
				break
			}
		}
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_ = l.Close(closeCtx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("lost the connection listening for roster changes; reconnecting", slog.Any("error", err))
		failures++
	}
}

// reloadRoster loads the whole roster once. A failure keeps the roster in
// hand: the periodic refresh, which logs its failures, tries again.
func (c *Consumer) reloadRoster(ctx context.Context) {
	loadCtx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	if tenants, err := c.opts.Catalog.LoadRoster(loadCtx); err == nil {
		c.roster.set(tenants)
	}
}
