package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/iostreams"
	"github.com/hubctl/hubctl/internal/testutil/kafkatest"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const testKEK = "MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=" // 32 bytes, base64

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func factory(env map[string]string, stderr *lockedBuffer) *cmdutil.Factory {
	ios, _, _, _ := iostreams.Test()
	ios.ErrOut = stderr
	return &cmdutil.Factory{IOStreams: ios, LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}}
}

func TestServeRefusesToStart(t *testing.T) {
	migrated := pgtest.DSN(t)
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{
			name: "no key-encryption key",
			env:  map[string]string{"STREAMING_HUB_POSTGRES_DSN": migrated},
			want: "STREAMING_HUB_KEK_REF",
		},
		{
			name: "KEK_REF names an unset variable",
			env:  map[string]string{"STREAMING_HUB_POSTGRES_DSN": migrated, "STREAMING_HUB_KEK_REF": "HUB_KEK"},
			want: "HUB_KEK, which is not set",
		},
		{
			name: "dev KEK outside local",
			env:  map[string]string{"STREAMING_HUB_POSTGRES_DSN": migrated, "STREAMING_HUB_DEV_KEK": testKEK},
			want: "only accepted with STREAMING_HUB_ENV=local",
		},
		{
			name: "schema not migrated",
			env:  map[string]string{"STREAMING_HUB_POSTGRES_DSN": pgtest.EmptyDSN(t), "STREAMING_HUB_KEK_REF": "HUB_KEK", "HUB_KEK": testKEK},
			want: "run `hubctl migrate up`",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stderr := &lockedBuffer{}
			code := cli.Run(context.Background(), factory(tt.env, stderr), []string{"serve", "--listen", "127.0.0.1:0"})
			if code != cmdutil.ExitFailure || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr.String(), tt.want)
			}
		})
	}
}

// TestServeRunsAndDrains starts serve on a real database and kfake, waits
// until /readyz says ready, then sends the equivalent of SIGTERM: the
// process must exit 0.
func TestServeRunsAndDrains(t *testing.T) {
	kafka := kafkatest.New(t, "lerian.streaming.midaz_transaction.posted")
	port := freePort(t)
	env := map[string]string{
		"STREAMING_HUB_POSTGRES_DSN":     pgtest.DSN(t),
		"STREAMING_HUB_KAFKA_BROKERS":    strings.Join(kafka.Brokers(), ","),
		"STREAMING_HUB_KEK_REF":          "HUB_KEK",
		"HUB_KEK":                        testKEK,
		"STREAMING_HUB_SHUTDOWN_TIMEOUT": "10s",
	}
	stderr := &lockedBuffer{}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(ctx, factory(env, stderr), []string{"serve", "--listen", fmt.Sprintf("127.0.0.1:%d", port)})
	}()

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := probe(base + "/readyz")
		if status == http.StatusOK {
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d before it was ready:\n%s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("not ready after 30s: %d %v\n%s", status, body, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if status, _ := probe(base + "/healthz"); status != http.StatusOK {
		t.Errorf("healthz = %d", status)
	}

	stop()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited %d after SIGTERM:\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop within 30s of SIGTERM")
	}
	for _, line := range []string{"shutting down", "hub stopped"} {
		if !strings.Contains(stderr.String(), line) {
			t.Errorf("log lacks %q:\n%s", line, stderr.String())
		}
	}
}

func probe(url string) (int, map[string]any) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
