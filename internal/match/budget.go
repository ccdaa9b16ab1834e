package match

import (
	"sync"
	"time"
)

// TenantBudgets hold the filter time each tenant may spend: a bucket per
// tenant that holds at most one budget and refills at one budget per
// second. A budget per batch would not do: a tenant whose events come one
// per batch would spend it again in every batch, and the batches of every
// tenant of its partition would wait. Safe for concurrent use (batches of
// several partitions run at once).
type TenantBudgets struct {
	budget time.Duration
	now    func() time.Time
	mu     sync.Mutex
	left   map[string]*bucket
}

type bucket struct {
	left time.Duration
	at   time.Time // when left was computed
}

// NewTenantBudgets returns budgets of budget a second per tenant on the
// clock now (nil: time.Now).
func NewTenantBudgets(budget time.Duration, now func() time.Time) *TenantBudgets {
	if now == nil {
		now = time.Now
	}
	return &TenantBudgets{budget: budget, now: now, left: make(map[string]*bucket)}
}

// spend charges tenant for d of filter time.
func (b *TenantBudgets) spend(tenant string, d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.refill(tenant)
	k.left -= d
}

// available reports whether tenant has filter time left.
func (b *TenantBudgets) available(tenant string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refill(tenant).left > 0
}

func (b *TenantBudgets) refill(tenant string) *bucket {
	now := b.now()
	k := b.left[tenant]
	if k == nil {
		k = &bucket{left: b.budget, at: now}
		b.left[tenant] = k
		return k
	}
	if elapsed := now.Sub(k.at); elapsed > 0 {
		k.left = min(b.budget, k.left+time.Duration(float64(b.budget)*elapsed.Seconds()))
		k.at = now
	}
	return k
}
