package sqs

import (
	"container/list"
	"sync"

	sqsapi "github.com/aws/aws-sdk-go-v2/service/sqs"
)

// clientKey identifies one credential set at one endpoint. The secret is
// kept as a hash: the key must tell a rotated secret from the old one, and
// need not hold the secret a second time to do it.
type clientKey struct {
	region     string
	endpoint   string
	keyID      string
	secretHash [32]byte
}

// clientCache holds SDK clients, least recently used first out. A client
// owns no connection (they belong to the Type's transport), so dropping
// one releases only memory and never disturbs a sink still using it.
type clientCache struct {
	capacity int

	mu      sync.Mutex
	entries map[clientKey]*list.Element // values are *cacheEntry
	recency *list.List                  // front = most recently used
}

type cacheEntry struct {
	key    clientKey
	client *sqsapi.Client
}

func newClientCache(capacity int) *clientCache {
	return &clientCache{
		capacity: max(capacity, 1),
		entries:  map[clientKey]*list.Element{},
		recency:  list.New(),
	}
}

// get returns the client cached for key, building it with build on a miss.
func (c *clientCache) get(key clientKey, build func() *sqsapi.Client) *sqsapi.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	if elem, ok := c.entries[key]; ok {
		c.recency.MoveToFront(elem)
		return elem.Value.(*cacheEntry).client
	}
	client := build()
	c.entries[key] = c.recency.PushFront(&cacheEntry{key: key, client: client})
	for c.recency.Len() > c.capacity {
		oldest := c.recency.Back()
		c.recency.Remove(oldest)
		delete(c.entries, oldest.Value.(*cacheEntry).key)
	}
	return client
}

// len is the number of cached clients.
func (c *clientCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.recency.Len()
}
