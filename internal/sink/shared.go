package sink

import "sync"

// Shared keeps one connection or client per key for as long as an open
// sink uses it: the first sink of a key builds it, the last one to close
// gives it back to be closed. Sinks of one destination and credential
// version share it, however many subscriptions name them.
type Shared[K comparable, V any] struct {
	mu      sync.Mutex
	entries map[K]*sharedEntry[V]
}

type sharedEntry[V any] struct {
	value V
	users int
}

// Acquire returns key's value, built by build when no open sink holds
// one, and counts one more user of it.
func (s *Shared[K, V]) Acquire(key K, build func() V) V {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries == nil {
		s.entries = map[K]*sharedEntry[V]{}
	}
	e := s.entries[key]
	if e == nil {
		e = &sharedEntry[V]{value: build()}
		s.entries[key] = e
	}
	e.users++
	return e.value
}

// Release counts one user less of key's value and reports whether it was
// the last: the caller then closes the value, outside this lock, since
// closing may wait on the network.
func (s *Shared[K, V]) Release(key K) (last bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[key]
	if e == nil {
		return false
	}
	e.users--
	if e.users > 0 {
		return false
	}
	delete(s.entries, key)
	return true
}

// Len is how many values open sinks hold.
func (s *Shared[K, V]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}
