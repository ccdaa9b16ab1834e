package dev_test

import (
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/clitest"
)

// startDev runs `hubctl dev` in-process with env and args and waits for its
// banner; it returns the DSN and brokers the banner printed.
func startDev(t *testing.T, env map[string]string, args ...string) (dev *clitest.Process, dsn, brokers string) {
	t.Helper()
	dev = clitest.Start(t, env, append([]string{"dev"}, args...)...)
	deadline := time.Now().Add(60 * time.Second)
	for {
		out := dev.Stderr()
		if m, k := postgresLine.FindStringSubmatch(out), brokersLine.FindStringSubmatch(out); m != nil && k != nil {
			return dev, m[1], k[1]
		}
		if code, exited := dev.Exited(); exited {
			t.Fatalf("dev exited early with %d:\n%s", code, out)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no banner within 60s:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
