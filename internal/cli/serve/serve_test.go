package serve_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/freeport"
	"github.com/hubctl/hubctl/internal/testutil/kafkatest"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/internal/testutil/wait"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const testKEK = "MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=" // 32 bytes, base64

func TestServeRefusesToStart(t *testing.T) {
	migrated := pgtest.DSN(t)
	// Bad configuration exits 2, like an invalid setting; a database the
	// hub cannot run on is a failure, 1.
	tests := []struct {
		name     string
		env      map[string]string
		want     string
		wantCode int
	}{
		{
			name:     "no key-encryption key",
			env:      map[string]string{"STREAMING_HUB_POSTGRES_DSN": migrated},
			want:     "STREAMING_HUB_KEK_REF",
			wantCode: cmdutil.ExitUsage,
		},
		{
			name:     "KEK_REF names an unset variable",
			env:      map[string]string{"STREAMING_HUB_POSTGRES_DSN": migrated, "STREAMING_HUB_KEK_REF": "HUB_KEK"},
			want:     "HUB_KEK, which is not set",
			wantCode: cmdutil.ExitUsage,
		},
		{
			name:     "dev KEK outside local",
			env:      map[string]string{"STREAMING_HUB_POSTGRES_DSN": migrated, "STREAMING_HUB_DEV_KEK": testKEK},
			want:     "only accepted with STREAMING_HUB_ENV=local",
			wantCode: cmdutil.ExitUsage,
		},
		{
			name:     "schema not migrated",
			env:      map[string]string{"STREAMING_HUB_POSTGRES_DSN": pgtest.EmptyDSN(t), "STREAMING_HUB_KEK_REF": "HUB_KEK", "HUB_KEK": testKEK},
			want:     "run `hubctl migrate up`",
			wantCode: cmdutil.ExitFailure,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := clitest.Run(t, tt.env, "serve", "--listen", "127.0.0.1:0")
			if r.Code != tt.wantCode || !strings.Contains(r.Stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.Code, r.Stderr, tt.wantCode, tt.want)
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
	hub := clitest.Start(t, env, "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", port))

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	wait.Poll{Patience: 30 * time.Second, Interval: 100 * time.Millisecond,
		Abort: hub.ExitReport, Explain: hub.Stderr,
	}.Until(t, "serve ready", func() bool {
		status, _ := probe(base + "/readyz")
		return status == http.StatusOK
	})
	if status, _ := probe(base + "/healthz"); status != http.StatusOK {
		t.Errorf("healthz = %d", status)
	}

	if code := hub.Stop(30 * time.Second); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM:\n%s", code, hub.Stderr())
	}
	for _, line := range []string{"shutting down", "hub stopped"} {
		if !strings.Contains(hub.Stderr(), line) {
			t.Errorf("log lacks %q:\n%s", line, hub.Stderr())
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

// freePort is a loopback port nobody listens on now, outside the range
// outgoing connections take theirs from (freeport).
func freePort(t *testing.T) int {
	t.Helper()
	ports, err := freeport.Pick(1)
	if err != nil {
		t.Fatal(err)
	}
	return ports[0]
}
