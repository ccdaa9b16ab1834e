package awsclient

import (
	"container/list"
	"crypto/sha256"
	"sync"
)

// ClientKey identifies one credential set at one endpoint, plus whatever
// else a service's client is built from (Variant: S3's path-style
// addressing). The secret is kept as a hash: the key must tell a rotated
// secret from the old one, and need not hold the secret a second time to
// do it.
type ClientKey struct {
	region     string
	endpoint   string
	variant    string
	keyID      string
	secretHash [32]byte
}

// KeyOf is the cache key of one credential set in one region at endpoint
// ("" for AWS's own); variant tells apart clients the same credentials
// build differently.
func KeyOf(region, endpoint, variant string, creds Credentials) ClientKey {
	return ClientKey{
		region:     region,
		endpoint:   endpoint,
		variant:    variant,
		keyID:      creds.AccessKeyID,
		secretHash: sha256.Sum256([]byte(creds.SecretAccessKey)),
	}
}

// ClientCache holds SDK clients, least recently used first out, so that
// subscriptions sharing a key share a client and Open is cheap enough to
// call per attempt. Each credential set a subscription has ever used gets
// one; rotated keys age out instead of accumulating for the life of the
// process. A client owns no connection (they belong to the type's
// transport), so dropping one releases only memory and never disturbs a
// sink still using it.
type ClientCache[C any] struct {
	capacity int

	mu      sync.Mutex
	entries map[ClientKey]*list.Element // values are *cacheEntry[C]
	recency *list.List                  // front = most recently used
}

type cacheEntry[C any] struct {
	key    ClientKey
	client C
}

// NewClientCache builds a cache of at most capacity clients.
func NewClientCache[C any](capacity int) *ClientCache[C] {
	return &ClientCache[C]{
		capacity: max(capacity, 1),
		entries:  map[ClientKey]*list.Element{},
		recency:  list.New(),
	}
}

// Get returns the client cached for key, building it with build on a miss.
func (c *ClientCache[C]) Get(key ClientKey, build func() C) C {
	c.mu.Lock()
	defer c.mu.Unlock()
	if elem, ok := c.entries[key]; ok {
		c.recency.MoveToFront(elem)
		return elem.Value.(*cacheEntry[C]).client
	}
	client := build()
	c.entries[key] = c.recency.PushFront(&cacheEntry[C]{key: key, client: client})
	for c.recency.Len() > c.capacity {
		oldest := c.recency.Back()
		c.recency.Remove(oldest)
		delete(c.entries, oldest.Value.(*cacheEntry[C]).key)
	}
	return client
}

// Len is the number of cached clients.
func (c *ClientCache[C]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.recency.Len()
}
