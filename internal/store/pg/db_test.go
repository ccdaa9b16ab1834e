package pg

import (
	"context"
	"testing"

	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

func TestEveryConnectionRunsWithoutJIT(t *testing.T) {
	ctx := context.Background()
	pool, err := Open(ctx, pgtest.DSN(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	// More connections than one, each made by the pool.
	conns := make([]string, 0, 3)
	for range 3 {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		var jit string
		if err := c.QueryRow(ctx, `SHOW jit`).Scan(&jit); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, jit)
	}
	for i, jit := range conns {
		if jit != "off" {
			t.Errorf("connection %d runs with jit = %s, want off", i, jit)
		}
	}
}
