package dispatch

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/pkg/hubapi"
	whsign "github.com/hubctl/hubctl/pkg/webhook"
)

// verifyingReceiver is a subscriber as a subscriber would write it: it
// verifies every request's signature with pkg/webhook before answering 204.
func verifyingReceiver(b *testing.B, secret string, delivered *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if err := whsign.VerifyRequest(r, body, []string{secret}, time.Now(), whsign.DefaultTolerance); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Header.Get(whsign.HeaderEventType) != whsign.VerificationEventType {
			delivered.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkDispatch measures deliveries per second through the whole
// dispatch path (claim, sink, signed POST verified by the receiver, record)
// with 8 workers, against the same receiver driven by a bare Go HTTP client
// loop at the same concurrency, and reports the ratio. Run it with a fixed
// count, e.g. -benchtime=20000x, so both sides move the same number of
// requests.
func BenchmarkDispatch(b *testing.B) {
	const workers = 8
	e := newEnv(b)
	const secret = "whsec_benchmark_secret_0123456789"
	var delivered atomic.Int64
	rc := verifyingReceiver(b, secret, &delivered)
	sub, _ := e.webhookSub("bench", rc.URL, func(in *hubapi.SubscriptionCreate) { in.SigningSecret = secret })
	e.insertJobs("bench", sub, b.N)

	b.ResetTimer()
	start := time.Now()
	_, stop := e.start(func(o *Options) {
		o.Dispatch.Workers = workers
		o.Dispatch.IdleInterval = 250 * time.Millisecond
	})
	for e.count(`SELECT count(*) FROM delivery_jobs WHERE state = 'succeeded'`) < b.N {
		time.Sleep(5 * time.Millisecond)
	}
	hubElapsed := time.Since(start)
	b.StopTimer()
	stop()
	if got := delivered.Load(); got != int64(b.N) {
		b.Fatalf("receiver verified %d deliveries, want %d", got, b.N)
	}

	bareElapsed := bareLoop(b, rc.URL, secret, workers, b.N)
	hubRate := float64(b.N) / hubElapsed.Seconds()
	bareRate := float64(b.N) / bareElapsed.Seconds()
	b.ReportMetric(hubRate, "deliveries/s")
	b.ReportMetric(bareRate, "bare_requests/s")
	b.ReportMetric(hubRate/bareRate, "ratio")
	b.ReportMetric(0, "ns/op") // the rates are the result
}

// bareLoop posts n signed requests to url from `concurrency` goroutines
// with a plain net/http client, the ceiling any dispatcher can reach
// against this receiver on this machine.
func bareLoop(b *testing.B, url, secret string, concurrency, n int) time.Duration {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}
	defer client.CloseIdleConnections()
	body := []byte(`{"n":1}`)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range concurrency {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(whsign.HeaderDeliveryID, uuid.Must(uuid.NewV7()).String())
				whsign.SignHeader(req.Header, []string{secret}, time.Now().Unix(), body)
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusNoContent {
					b.Errorf("bare request answered %s", strconv.Itoa(resp.StatusCode))
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}
