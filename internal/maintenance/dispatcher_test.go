package maintenance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/store/queue"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/oncall"
)

// calls records what the services asked of the dispatcher.
type calls struct {
	outwaitedBy, forgotAt, evictedAt, reportedAt time.Time
	forgetErr                                    error
}

func (c *calls) Wake() {}
func (c *calls) ReleaseOutwaited(_ context.Context, next time.Time) {
	c.outwaitedBy = next
}
func (c *calls) ForgetUnusedBreakers(_ context.Context, now time.Time) error {
	c.forgotAt = now
	return c.forgetErr
}
func (c *calls) EvictIdleCaches(now time.Time)   { c.evictedAt = now }
func (c *calls) Breakers() []oncall.BreakerState { return nil }
func (c *calls) ReportPoisoned(context.Context, pgx.Tx, []queue.Poisoned, time.Time) error {
	return nil
}
func (c *calls) ReportDeadLetters(_ context.Context, now time.Time) (int, error) {
	c.reportedAt = now
	return 0, c.forgetErr
}

// The services of the dispatcher's own state hand it the time it needs.
func TestDispatcherServicesCallTheDispatcher(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	c := &calls{forgetErr: errors.New("database away")}
	o := Options{Dispatcher: c, ReapInterval: 5 * time.Second}
	if err := outwaitedRelease(o).RunOnce(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	if want := now.Add(5 * time.Second); !c.outwaitedBy.Equal(want) {
		t.Errorf("outwaited by %s, want the next run %s: a lease must cover an attempt until then", c.outwaitedBy, want)
	}
	if err := unusedBreakers(o).RunOnce(context.Background(), now); !errors.Is(err, c.forgetErr) || !c.forgotAt.Equal(now) {
		t.Errorf("unused breakers at %s returned %v, want %s and the dispatcher's error", c.forgotAt, err, now)
	}
	evict := cacheEviction(o)
	if err := evict.RunOnce(context.Background(), now); err != nil || !c.evictedAt.Equal(now) {
		t.Errorf("cache eviction at %s (%v), want %s", c.evictedAt, err, now)
	}
	if evict.Interval != cacheEvictionInterval {
		t.Errorf("cache eviction every %s, want %s", evict.Interval, cacheEvictionInterval)
	}
	if err := deadLetterReports(o).RunOnce(context.Background(), now); !errors.Is(err, c.forgetErr) || !c.reportedAt.Equal(now) {
		t.Errorf("dead letter reports at %s returned %v, want %s and the dispatcher's error", c.reportedAt, err, now)
	}
}
