package api

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/idempotency"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/sink/registry"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
	"github.com/hubctl/hubctl/internal/testutil/syncbuf"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// TestMain stops the PostgreSQL server pgtest may start for this package.
func TestMain(m *testing.M) { pgtest.Main(m) }

const testAdminToken = "admin-token-for-tests-0123456789"

// testRotationOverlap is STREAMING_HUB_ROTATION_OVERLAP's default.
const testRotationOverlap = 24 * time.Hour

// testKeyring seals secrets at rest with a fixed test key.
func testKeyring(t testing.TB) *crypto.Keyring {
	t.Helper()
	key := sha256.Sum256([]byte("hubctl api test key"))
	keys, err := crypto.ParseKeyring(base64.StdEncoding.EncodeToString(key[:]))
	if err != nil {
		t.Fatalf("keyring: %v", err)
	}
	return keys
}

// whoamiPattern is a /v1 route only the tests register: it answers with
// the tenant the request acts on, which is what tenant authentication
// decides.
const whoamiPattern = "GET /v1/test/whoami"

// harness is the real handler behind a real HTTP server on a fresh
// database, with its log captured.
type harness struct {
	url    string
	server *Server
	store  *storetest.Store
	logs   *syncbuf.Buffer
	// stop waits for the requests in flight, whose access log lines are
	// written after their answers reach the client.
	stop func()
}

// newHarness starts a hub API. adminToken "" disables the admin API.
// configure, when given, adjusts the options before the server is built.
func newHarness(t testing.TB, adminToken string, configure ...func(*Options)) *harness {
	t.Helper()
	return newHarnessWith(t, adminToken, service.SubscriptionOptions{RotationOverlap: testRotationOverlap}, configure...)
}

// newHarnessWith is newHarness whose subscription use cases run with subs.
func newHarnessWith(t testing.TB, adminToken string, subs service.SubscriptionOptions, configure ...func(*Options)) *harness {
	t.Helper()
	st, err := storetest.Connect(context.Background(), pgtest.DSN(t), pg.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(st.Close)
	// Private addresses are allowed so webhook probes reach httptest
	// receivers on 127.0.0.1.
	sinks, err := registry.New(registry.Options{AllowPrivate: true})
	if err != nil {
		t.Fatalf("sink registry: %v", err)
	}
	t.Cleanup(sinks.Close)
	logs := &syncbuf.Buffer{}
	opts := Options{
		Logger:     slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		AdminToken: adminToken,
		ControlPlane: service.NewControlPlane(st.Queue, st.Catalog, st.Lifecycle, service.ControlPlaneOptions{
			NewSubscriptions: func() (*service.Subscriptions, func(), error) {
				return service.NewSubscriptions(st.Catalog, st.Queue, st.OnCall, testKeyring(t), sinks.Registry, subs), nil, nil
			},
		}),
		Idempotency: idempotency.New(st.Catalog, testKeyring(t), time.Now),
	}
	for _, c := range configure {
		c(&opts)
	}
	server := New(opts)
	server.handleTenant(whoamiPattern, func(w http.ResponseWriter, r *http.Request, hub hubapi.ControlPlane, tenant string) error {
		// Any use case settles whether the caller may act on the tenant.
		if _, err := hub.ListSubscriptions(r.Context(), tenant, hubapi.ListParams{Limit: 1}); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]string{"tenant": infoFrom(r.Context()).tenant})
		return nil
	})
	server.handlePublic("GET /test/panic", func(http.ResponseWriter, *http.Request) error {
		panic("boom: the handler broke")
	})
	var handler http.Handler = server
	// Benchmarks measure the API, not the contract check.
	if _, benchmark := t.(*testing.B); !benchmark {
		handler = enforceContract(t, server)
	}
	ts := httptest.NewServer(handler)
	t.Cleanup(ts.Close)
	return &harness{url: ts.URL, server: server, store: st, logs: logs, stop: ts.Close}
}

// call is one request to the harness.
type call struct {
	method, path string
	token        string
	body         string
	header       map[string]string
}

type reply struct {
	status int
	header http.Header
	raw    string
	body   map[string]any
}

func (h *harness) send(t testing.TB, c call) reply {
	t.Helper()
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, err := http.NewRequest(c.method, h.url+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for name, value := range c.header {
		req.Header.Set(name, value)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := reply{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if len(raw) > 0 {
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("%s %s: Content-Type %q, body %s", c.method, c.path, ct, raw)
		}
		if err := json.Unmarshal(raw, &r.body); err != nil {
			t.Fatalf("%s %s: body is not a JSON object: %v: %s", c.method, c.path, err, raw)
		}
	}
	return r
}

// must sends c and fails the test unless it answers want.
func (h *harness) must(t testing.TB, want int, c call) reply {
	t.Helper()
	r := h.send(t, c)
	if r.status != want {
		t.Fatalf("%s %s = %d %s, want %d", c.method, c.path, r.status, r.raw, want)
	}
	return r
}

// admin sends c with the admin token.
func (h *harness) admin(t testing.TB, want int, method, path, body string) reply {
	t.Helper()
	return h.must(t, want, call{method: method, path: path, token: testAdminToken, body: body})
}

// tenantWithKey creates a tenant and a key for it, returning the key's id
// and token.
func (h *harness) tenantWithKey(t testing.TB, tenant string) (keyID, token string) {
	t.Helper()
	h.admin(t, http.StatusCreated, "POST", "/admin/tenants", `{"id":"`+tenant+`"}`)
	key := h.admin(t, http.StatusCreated, "POST", "/admin/tenants/"+tenant+"/keys", `{"name":"key of `+tenant+`"}`)
	return key.body["id"].(string), key.body["key"].(string)
}
