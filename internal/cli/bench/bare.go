package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubctl/hubctl/internal/benchmark"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/pkg/webhook"
)

// bareEventType marks the bare loop's requests, which the receiver counts
// apart from the hub's deliveries.
const bareEventType = "bench.bare"

// bareLoop sends --bare-n signed POSTs of --size bytes to target from
// --bare-workers workers, each with its own kept-alive connection: what a
// receiver takes without the hub in between.
func (b *bencher) bareLoop(ctx context.Context, target, secret string) (benchmark.Bare, error) {
	f := b.opts.Factory
	n, workers := b.opts.BareRequests, b.opts.BareWorkers
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers},
	}
	defer client.CloseIdleConnections()
	body := benchmark.Payload(b.opts.Size, time.Now())

	progress := cmdutil.NewProgress(f, "Bare loop ", f.IOStreams.IsStderrTTY())
	defer progress.Done()
	var next, sent atomic.Int64
	var once sync.Once
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				if err := post(ctx, client, target, secret, body); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				if done := sent.Add(1); done%500 == 0 {
					progress.Set(done, int64(n))
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return benchmark.Bare{}, cmdutil.WithCode(cmdutil.ExitFailure, fmt.Errorf("bare loop to the receiver: %w", firstErr))
	}
	if err := ctx.Err(); err != nil {
		return benchmark.Bare{}, err
	}
	progress.Set(int64(n), int64(n))
	return benchmark.Bare{Requests: n, Workers: workers, ElapsedSeconds: elapsed.Seconds(),
		RequestsPerSecond: benchmark.Rate(n, elapsed)}, nil
}

// post sends one request signed as the hub signs a delivery.
func post(ctx context.Context, client *http.Client, target, secret string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.HeaderEventType, bareEventType)
	webhook.SignHeader(req.Header, []string{secret}, time.Now().Unix(), body)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("answered %s", resp.Status)
	}
	return nil
}
