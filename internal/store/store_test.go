package store

import (
	"context"
	"testing"
)

func TestEveryConnectionRunsWithoutJIT(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	// More connections than one, each made by the pool.
	conns := make([]string, 0, 3)
	for range 3 {
		c, err := st.Pool.Acquire(ctx)
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
