package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// flaky fails the first fails round trips after the hub answered, and
// records the Idempotency-Key of each.
type flaky struct {
	mu    sync.Mutex
	fails int
	keys  []string
}

func (f *flaky) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = append(f.keys, req.Header.Get(HeaderIdempotencyKey))
	if err == nil && f.fails > 0 {
		f.fails--
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, errors.New("connection reset by peer")
	}
	return resp, err
}

func TestPostsCarryOneIdempotencyKeyAcrossRetries(t *testing.T) {
	defer func(d time.Duration) { retryDelay = d }(retryDelay)
	retryDelay = time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"acme","status":"active"}`)
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	newClient := func(fails int, opts ...Option) (*Client, *flaky) {
		f := &flaky{fails: fails}
		c, err := New(srv.URL, append([]Option{WithHTTPClient(&http.Client{Transport: f})}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return c, f
	}

	c, f := newClient(2)
	if _, err := c.CreateTenant(ctx, "acme"); err != nil {
		t.Fatalf("create after two lost answers: %v", err)
	}
	if len(f.keys) != 3 || f.keys[0] == "" || f.keys[1] != f.keys[0] || f.keys[2] != f.keys[0] {
		t.Fatalf("keys %q: want one key sent three times", f.keys)
	}
	first := f.keys[0]
	if _, err := c.CreateTenant(ctx, "acme"); err != nil || f.keys[3] == first {
		t.Errorf("a second call reused the key %q (%v)", first, err)
	}

	c, f = newClient(DefaultRetries + 1)
	if _, err := c.CreateTenant(ctx, "acme"); err == nil || len(f.keys) != DefaultRetries+1 {
		t.Errorf("err %v after %d sends: want a failure after %d", err, len(f.keys), DefaultRetries+1)
	}

	c, f = newClient(1, WithRetries(0))
	if _, err := c.CreateTenant(ctx, "acme"); err == nil || len(f.keys) != 1 {
		t.Errorf("WithRetries(0): err %v after %d sends, want one failed send", err, len(f.keys))
	}

	c, f = newClient(1)
	if _, err := c.CreateTenant(WithIdempotencyKey(ctx, "mine"), "acme"); err != nil || len(f.keys) != 2 || f.keys[0] != "mine" || f.keys[1] != "mine" {
		t.Errorf("caller's key: err %v, keys %q", err, f.keys)
	}

	c, f = newClient(1)
	if _, err := c.GetTenant(ctx, "acme"); err == nil || len(f.keys) != 1 || f.keys[0] != "" {
		t.Errorf("GET: err %v, keys %q: want no key and no retry", err, f.keys)
	}
}
