package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/idempotency"
	"github.com/hubctl/hubctl/pkg/client"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func withKey(c call, key string) call {
	c.header = map[string]string{HeaderIdempotencyKey: key}
	return c
}

func TestConcurrentIdenticalRequestsCreateOneSubscription(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, token := h.tenantWithKey(t, "acme")
	body := webhookBody(newReceiver(t, http.StatusNoContent))
	create := withKey(call{method: "POST", path: "/v1/subscriptions", token: token, body: body}, "create-orders-1")

	const n = 8
	replies := make([]reply, n)
	var wg sync.WaitGroup
	for i := range replies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = h.send(t, create)
		}()
	}
	wg.Wait()
	replayed := 0
	for i, r := range replies {
		if r.status != http.StatusCreated || r.raw != replies[0].raw {
			t.Fatalf("reply %d = %d %s; want the first 201 %s", i, r.status, r.raw, replies[0].raw)
		}
		if r.header.Get(HeaderIdempotencyReplayed) == "true" {
			replayed++
		}
		if r.header.Get("Location") == "" {
			t.Errorf("reply %d has no Location", i)
		}
	}
	if replayed != n-1 {
		t.Errorf("%d replies replayed, want %d", replayed, n-1)
	}
	// The stored response holds the signing secret: the answers above
	// carried it, the database only sealed.
	secret, _ := replies[0].body["signing_secret"].(string)
	if secret == "" {
		t.Fatalf("created webhook without a signing secret: %s", replies[0].raw)
	}
	var subs int
	var stored string
	ctx := context.Background()
	if err := h.store.Pool.QueryRow(ctx, `SELECT count(*) FROM subscriptions WHERE tenant_id = 'acme'`).Scan(&subs); err != nil {
		t.Fatal(err)
	}
	if err := h.store.Pool.QueryRow(ctx, `SELECT response FROM idempotency_keys WHERE key = 'create-orders-1'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if subs != 1 {
		t.Fatalf("%d subscriptions created, want 1", subs)
	}
	if !strings.HasPrefix(stored, "v1:") || strings.Contains(stored, secret) {
		t.Errorf("stored response %q is not a sealed envelope", stored)
	}
}

func TestIdempotencyKeyAnswersByRequestAndCaller(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, acme := h.tenantWithKey(t, "acme")
	_, globex := h.tenantWithKey(t, "globex")
	rcv := newReceiver(t, http.StatusNoContent)
	create := func(token, body, key string) reply {
		return h.send(t, withKey(call{method: "POST", path: "/v1/subscriptions", token: token, body: body}, key))
	}

	first := create(acme, webhookBody(rcv), "k")
	if first.status != http.StatusCreated {
		t.Fatalf("create = %d %s", first.status, first.raw)
	}
	other := create(acme, strings.Replace(webhookBody(rcv), "orders", "refunds", 1), "k")
	if other.status != http.StatusUnprocessableEntity || other.body["code"] != idempotency.CodeKeyReused {
		t.Fatalf("another body under the key = %d %s, want 422 %s", other.status, other.raw, idempotency.CodeKeyReused)
	}
	// Another caller's key of the same name is its own.
	if r := create(globex, webhookBody(rcv), "k"); r.status != http.StatusCreated || r.body["id"] == first.body["id"] {
		t.Fatalf("globex under acme's key = %d %s, want its own subscription", r.status, r.raw)
	}
	// A request that failed validation is answered the same way again.
	bad := create(acme, `{"name": 5}`, "bad")
	again := create(acme, `{"name": 5}`, "bad")
	if bad.status != http.StatusBadRequest || again.status != bad.status || again.raw != bad.raw || again.header.Get(HeaderIdempotencyReplayed) != "true" {
		t.Errorf("invalid body: %d %s, then %d %s", bad.status, bad.raw, again.status, again.raw)
	}
	for _, key := range []string{strings.Repeat("x", 256), "has space", "tab\there"} {
		r := create(acme, webhookBody(rcv), key)
		if r.status != http.StatusBadRequest || r.body["code"] != CodeInvalidRequest {
			t.Errorf("key %q = %d %s, want 400 invalid_request", key, r.status, r.raw)
		}
	}
	// The key is only read on POST.
	if r := h.send(t, withKey(call{method: "GET", path: "/v1/subscriptions", token: acme}, "k")); r.status != http.StatusOK {
		t.Errorf("GET with a key = %d %s", r.status, r.raw)
	}
}

func TestCreatedAPIKeyIsReplayedButStoredSealed(t *testing.T) {
	h := newHarness(t, testAdminToken)
	h.admin(t, http.StatusCreated, "POST", "/admin/tenants", `{"id":"acme"}`)
	create := withKey(call{method: "POST", path: "/admin/tenants/acme/keys", token: testAdminToken, body: `{"name":"ci"}`}, "key-ci")
	first := h.must(t, http.StatusCreated, create)
	second := h.must(t, http.StatusCreated, create)
	token, _ := first.body["key"].(string)
	if token == "" || second.raw != first.raw {
		t.Fatalf("replay %s, want the first answer %s", second.raw, first.raw)
	}
	var keys int
	var stored string
	ctx := context.Background()
	if err := h.store.Pool.QueryRow(ctx, `SELECT count(*) FROM tenant_api_keys WHERE tenant_id = 'acme'`).Scan(&keys); err != nil {
		t.Fatal(err)
	}
	if err := h.store.Pool.QueryRow(ctx, `SELECT response FROM idempotency_keys WHERE scope = 'admin' AND key = 'key-ci'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if keys != 1 || strings.Contains(stored, token) || !strings.HasPrefix(stored, "v1:") {
		t.Fatalf("%d keys, stored %q: want one key and a sealed response", keys, stored)
	}
}

func TestDuplicateOfARequestInProgressWaitsThenGets409(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, token := h.tenantWithKey(t, "acme")
	defer func(wait time.Duration) { idempotencyWait = wait }(idempotencyWait)
	idempotencyWait = 100 * time.Millisecond
	// A claim another process holds and has not finished.
	body := `{"since":"2026-01-02T00:00:00Z"}`
	path := "/v1/subscriptions/0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b/recover"
	fingerprint := idempotency.Fingerprint("POST", path, "", "acme", []byte(body))
	if _, err := h.server.opts.Idempotency.Begin(context.Background(), tenantScope("acme"), "slow", "acme", fingerprint); err != nil {
		t.Fatal(err)
	}
	r := h.send(t, withKey(call{method: "POST", path: path, token: token, body: body}, "slow"))
	if r.status != http.StatusConflict || r.body["code"] != idempotency.CodeKeyInProgress || r.header.Get("Retry-After") == "" {
		t.Fatalf("duplicate of a request in progress = %d %s (Retry-After %q)", r.status, r.raw, r.header.Get("Retry-After"))
	}
}

// dropFirst is a transport whose first response is lost after the hub
// handled the request: the connection broke on the way back.
type dropFirst struct {
	mu      sync.Mutex
	dropped bool
	keys    []string
	replays []string
}

func (d *dropFirst) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.keys = append(d.keys, req.Header.Get(HeaderIdempotencyKey))
	if err != nil {
		return nil, err
	}
	d.replays = append(d.replays, resp.Header.Get(HeaderIdempotencyReplayed))
	if !d.dropped {
		d.dropped = true
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, errors.New("connection reset by peer")
	}
	return resp, nil
}

func TestClientRetryAfterADroppedResponseGetsTheFirstResponse(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, token := h.tenantWithKey(t, "acme")
	transport := &dropFirst{}
	c, err := client.New(h.url, client.WithToken(token), client.WithHTTPClient(&http.Client{Transport: transport}))
	if err != nil {
		t.Fatal(err)
	}
	created, err := c.CreateSubscription(context.Background(), "", hubapi.SubscriptionCreate{
		Name: "orders", EventTypes: []string{"transaction.*"},
		Sink: json.RawMessage(`{"type":"webhook","url":"` + newReceiver(t, http.StatusNoContent).url + `"}`),
	})
	if err != nil {
		t.Fatalf("create through a dropped response: %v", err)
	}
	if len(transport.keys) != 2 || transport.keys[0] == "" || transport.keys[0] != transport.keys[1] {
		t.Fatalf("Idempotency-Keys sent %q: want one key, sent twice", transport.keys)
	}
	if transport.replays[1] != "true" {
		t.Errorf("the retry's answer was not the stored one (Idempotency-Replayed %q)", transport.replays[1])
	}
	var subs int
	var id string
	if err := h.store.Pool.QueryRow(context.Background(), `SELECT count(*), min(id::text) FROM subscriptions WHERE tenant_id = 'acme'`).Scan(&subs, &id); err != nil {
		t.Fatal(err)
	}
	if subs != 1 || id != created.ID || created.SigningSecret == "" {
		t.Fatalf("%d subscriptions (%s), client got %s with secret %q: want the one created, secret included", subs, id, created.ID, created.SigningSecret)
	}
}

// A purged tenant's stored answers go with it: the tenant created again
// under its id, a request repeating one of the purged tenant's keys is
// done afresh, not answered with the purged tenant's ids and secrets. The
// same holds for the admin's keys acting on the tenant (an API key
// created for it, the tenant's own creation).
func TestPurgedTenantsIdempotentAnswersAreNotReplayed(t *testing.T) {
	h := newHarness(t, testAdminToken)
	adminCall := func(path, body, key string) call {
		return withKey(call{method: "POST", path: path, token: testAdminToken, body: body}, key)
	}
	createTenant := adminCall("/admin/tenants", `{"id":"acme"}`, "tenant-acme")
	createKey := adminCall("/admin/tenants/acme/keys", `{"name":"ci"}`, "key-acme")
	createSub := func(token string) call {
		return withKey(call{method: "POST", path: "/v1/subscriptions", token: token,
			body: webhookBody(newReceiver(t, http.StatusNoContent))}, "create-orders")
	}
	h.must(t, http.StatusCreated, createTenant)
	firstKey := h.must(t, http.StatusCreated, createKey)
	body := createSub(firstKey.body["key"].(string))
	firstSub := h.must(t, http.StatusCreated, body)

	h.admin(t, http.StatusOK, "DELETE", "/admin/tenants/acme?purge=true", "")

	again := h.must(t, http.StatusCreated, createTenant)
	secondKey := h.must(t, http.StatusCreated, createKey)
	body.token = secondKey.body["key"].(string)
	secondSub := h.must(t, http.StatusCreated, body)
	for name, r := range map[string]reply{"tenant": again, "API key": secondKey, "subscription": secondSub} {
		if r.header.Get(HeaderIdempotencyReplayed) != "" {
			t.Errorf("the %s created again was answered with the purged tenant's stored response: %s", name, r.raw)
		}
	}
	if secondKey.body["key"] == firstKey.body["key"] {
		t.Error("the API key created again is the purged tenant's")
	}
	if secondSub.body["id"] == firstSub.body["id"] || secondSub.body["signing_secret"] == firstSub.body["signing_secret"] {
		t.Errorf("the subscription created again is the purged tenant's: %s", secondSub.raw)
	}
	var subs int
	if err := h.store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM subscriptions WHERE tenant_id = 'acme'`).Scan(&subs); err != nil {
		t.Fatal(err)
	}
	if subs != 1 {
		t.Errorf("acme has %d subscriptions, want the one created after the purge", subs)
	}
}
