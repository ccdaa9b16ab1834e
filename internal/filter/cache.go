package filter

import (
	"sync"
	"time"
)

// Cache keeps compiled filters per subscription version, so ingest
// compiles a stored expression once, not once per batch. A subscription's
// version is its updated_at, which every change bumps. Safe for concurrent
// use.
type Cache struct {
	mu      sync.Mutex
	entries map[[16]byte]*cached
	// lookups counts calls; entries not looked up within the last
	// idleLookups calls (their subscription was deleted, or its tenant
	// has gone quiet) are swept out every sweepEvery calls.
	lookups uint64
}

type cached struct {
	version  time.Time
	prg      *Program
	err      error
	lastUsed uint64
}

const (
	sweepEvery  = 1 << 12
	idleLookups = 1 << 20
)

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{entries: map[[16]byte]*cached{}} }

// Program returns the compiled filter of subscription id at version. A
// stored expression that no longer compiles (it was accepted under other
// limits) returns its error every time, cached like a program.
func (c *Cache) Program(id [16]byte, version time.Time, expr string) (*Program, error) {
	c.mu.Lock()
	c.lookups++
	now := c.lookups
	if now%sweepEvery == 0 {
		for k, e := range c.entries {
			if now-e.lastUsed > idleLookups {
				delete(c.entries, k)
			}
		}
	}
	if e := c.entries[id]; e != nil && e.version.Equal(version) {
		e.lastUsed = now
		c.mu.Unlock()
		return e.prg, e.err
	}
	c.mu.Unlock()

	// Compiled outside the lock: compiling takes far longer than a lookup.
	prg, err := Compile(expr)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[id]; e == nil || !e.version.After(version) {
		c.entries[id] = &cached{version: version, prg: prg, err: err, lastUsed: now}
	}
	return prg, err
}

// Len is how many subscriptions' filters the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
