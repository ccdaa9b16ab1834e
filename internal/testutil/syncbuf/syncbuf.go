// Package syncbuf is a buffer that goroutines of the code under test write
// while the test reads it: a logger's destination, a running command's
// output, a receiver's prints.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is safe for concurrent writers and readers; its zero value is
// empty and ready.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
