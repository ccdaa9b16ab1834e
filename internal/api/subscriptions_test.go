package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/testutil/httprecord"
	"github.com/hubctl/hubctl/pkg/webhook"
)

// receiver is a webhook destination: it records every request the hub
// sends and answers with the status it is set to.
type receiver struct {
	*httprecord.Server
	url    string
	status atomic.Int64
}

func newReceiver(t testing.TB, status int) *receiver {
	t.Helper()
	rcv := &receiver{}
	rcv.answer(status)
	rcv.Server = httprecord.Start(t, httprecord.Options{Respond: func(w http.ResponseWriter, _ *http.Request, _ int) {
		status := int(rcv.status.Load())
		w.WriteHeader(status)
		fmt.Fprintf(w, "receiver answered %d", status)
	}})
	rcv.url = rcv.URL + "/hook"
	return rcv
}

func (rcv *receiver) answer(status int) { rcv.status.Store(int64(status)) }

// last returns the latest request, failing the test when there are not
// exactly want requests so far.
func (rcv *receiver) last(t *testing.T, want int) httprecord.Request {
	t.Helper()
	got := rcv.Requests()
	if len(got) != want {
		t.Fatalf("receiver got %d requests, want %d", len(got), want)
	}
	return got[want-1]
}

// signedBy reports whether signature line i of req is a valid signature
// by secret, as a receiver using pkg/webhook would check it.
func signedBy(req httprecord.Request, i int, secret string) bool {
	lines := req.Header.Values(webhook.HeaderSignature)
	if i >= len(lines) {
		return false
	}
	return webhook.Verify([]string{secret}, req.Header.Get(webhook.HeaderTimestamp), lines[i:i+1], req.Body, time.Now(), 0) == nil
}

func webhookBody(rcv *receiver) string {
	return `{"name":"orders","sink":{"type":"webhook","url":"` + rcv.url + `"},"event_types":["transaction.*"]}`
}

const pullBody = `{"name":"ledger feed","sink":{"type":"pull"},"event_types":["*"]}`

// v1 sends a tenant API request with token and fails unless it answers want.
func (h *harness) v1(t testing.TB, want int, token, method, path, body string) reply {
	t.Helper()
	return h.must(t, want, call{method: method, path: path, token: token, body: body})
}

// secretFree collects answers that must not show any signing secret: a
// signing_secret field in them may only hold the mask.
type secretFree []reply

func (s *secretFree) add(r reply) reply {
	*s = append(*s, r)
	return r
}

func (s secretFree) check(t *testing.T, secrets ...string) {
	t.Helper()
	for _, r := range s {
		if strings.Count(r.raw, `"signing_secret"`) != strings.Count(r.raw, `"signing_secret":"****"`) {
			t.Errorf("an answer has a signing_secret field other than the mask: %s", r.raw)
		}
		for _, secret := range secrets {
			assertNoSecret(t, "answer "+r.raw, r.raw, secret)
		}
	}
}

func TestWebhookSubscriptionLifecycle(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, key := h.tenantWithKey(t, "acme")
	rcv := newReceiver(t, http.StatusOK)
	var reads secretFree

	// Create: verified at once against the receiver, secret shown once.
	created := h.v1(t, http.StatusCreated, key, "POST", "/v1/subscriptions", webhookBody(rcv))
	id, _ := created.body["id"].(string)
	firstSecret, _ := created.body["signing_secret"].(string)
	sink, _ := created.body["sink"].(map[string]any)
	if id == "" || !strings.HasPrefix(firstSecret, "whsec_") || created.body["tenant_id"] != "acme" ||
		created.body["verification_state"] != "active" || created.body["enabled"] != true ||
		created.body["schema_major"] != float64(1) || created.body["attempt_timeout"] != "10s" ||
		sink["type"] != "webhook" || sink["url"] != rcv.url || created.body["previous_secret_expires_at"] != nil {
		t.Fatalf("created %s", created.raw)
	}
	if _, present := created.body["verification_error"]; present {
		t.Errorf("a verified subscription has a verification_error: %s", created.raw)
	}
	if loc := created.header.Get("Location"); loc != "/v1/subscriptions/"+id {
		t.Errorf("Location = %q", loc)
	}
	probe := rcv.last(t, 1)
	if probe.Header.Get(webhook.HeaderEventType) != webhook.VerificationEventType || len(probe.Header.Values(webhook.HeaderSignature)) != 1 || !signedBy(probe, 0, firstSecret) {
		t.Errorf("the create probe is not a verification signed with the returned secret: %v", probe.Header)
	}
	path := "/v1/subscriptions/" + id

	got := reads.add(h.v1(t, http.StatusOK, key, "GET", path, ""))
	if got.body["id"] != id || got.body["name"] != "orders" || got.body["verification_state"] != "active" || got.body["signing_secret"] != "****" {
		t.Errorf("get %s", got.raw)
	}

	// PATCH: any subset, and null clears the optional fields.
	patched := reads.add(h.v1(t, http.StatusOK, key, "PATCH", path,
		`{"name":"orders v2","event_types":["transaction.posted"],"retry_schedule":["1s","1m"],"attempt_timeout":"5s","origin":"midaz","schema_major":2}`))
	if patched.body["name"] != "orders v2" || fmt.Sprint(patched.body["event_types"]) != "[transaction.posted]" ||
		fmt.Sprint(patched.body["retry_schedule"]) != "[1s 1m]" || patched.body["attempt_timeout"] != "5s" ||
		patched.body["origin"] != "midaz" || patched.body["schema_major"] != float64(2) {
		t.Errorf("patched %s", patched.raw)
	}
	cleared := reads.add(h.v1(t, http.StatusOK, key, "PATCH", path, `{"origin":null,"retry_schedule":null}`))
	if cleared.body["origin"] != nil || cleared.body["retry_schedule"] != nil || cleared.body["name"] != "orders v2" {
		t.Errorf("cleared %s", cleared.raw)
	}
	if same := reads.add(h.v1(t, http.StatusOK, key, "PATCH", path, `{}`)); same.body["name"] != "orders v2" {
		t.Errorf("empty patch %s", same.raw)
	}

	// Enabling and disabling: by action and by PATCH, interchangeably.
	steps := []struct {
		method, path, body string
		enabled            bool
	}{
		{"POST", path + "/disable", "", false},
		{"PATCH", path, `{"enabled":true}`, true},
		{"PATCH", path, `{"enabled":false}`, false},
		{"POST", path + "/enable", "{}", true},
	}
	for _, step := range steps {
		r := reads.add(h.v1(t, http.StatusOK, key, step.method, step.path, step.body))
		if r.body["enabled"] != step.enabled {
			t.Errorf("%s %s %s: enabled = %v", step.method, step.path, step.body, r.body["enabled"])
		}
	}
	if probes := len(rcv.Requests()); probes != 1 {
		t.Errorf("%d probes after edits that left the sink alone, want the create's one", probes)
	}

	if verified := reads.add(h.v1(t, http.StatusOK, key, "POST", path+"/verify", "")); verified.body["verification_state"] != "active" {
		t.Errorf("verify %s", verified.raw)
	}
	rcv.last(t, 2)

	// Rotation: a new secret, and the old one signing alongside it until
	// the overlap ends.
	before := time.Now()
	rotated := h.v1(t, http.StatusOK, key, "POST", path+"/rotate-secret", "")
	after := time.Now()
	secondSecret, _ := rotated.body["signing_secret"].(string)
	expiresText, _ := rotated.body["previous_secret_expires_at"].(string)
	expires, err := time.Parse(time.RFC3339Nano, expiresText)
	if !strings.HasPrefix(secondSecret, "whsec_") || secondSecret == firstSecret || err != nil {
		t.Fatalf("rotated %s", rotated.raw)
	}
	if expires.Before(before.Add(testRotationOverlap).Truncate(time.Microsecond)) || expires.After(after.Add(testRotationOverlap)) {
		t.Errorf("previous_secret_expires_at %s is not the rotation time plus %s", expires, testRotationOverlap)
	}
	shown := reads.add(h.v1(t, http.StatusOK, key, "GET", path, ""))
	if shown.body["previous_secret_expires_at"] != expiresText {
		t.Errorf("the subscription shows previous_secret_expires_at %v, want %s", shown.body["previous_secret_expires_at"], expiresText)
	}
	reads.add(h.v1(t, http.StatusOK, key, "POST", path+"/verify", ""))
	probe = rcv.last(t, 3)
	if n := len(probe.Header.Values(webhook.HeaderSignature)); n != 2 || !signedBy(probe, 0, secondSecret) || !signedBy(probe, 1, firstSecret) {
		t.Errorf("probe during the overlap: %d signature lines %v, want the new secret's then the old one's", n, probe.Header.Values(webhook.HeaderSignature))
	}

	// Rotating again within the overlap, to the caller's own secret, drops
	// the oldest: never more than two signatures.
	const ownSecret = "my-own-signing-secret-0123456789"
	own := h.v1(t, http.StatusOK, key, "POST", path+"/rotate-secret", `{"signing_secret":"`+ownSecret+`"}`)
	if own.body["signing_secret"] != ownSecret || own.body["previous_secret_expires_at"] == nil {
		t.Errorf("rotate to own secret %s", own.raw)
	}
	reads.add(h.v1(t, http.StatusOK, key, "POST", path+"/verify", ""))
	probe = rcv.last(t, 4)
	if n := len(probe.Header.Values(webhook.HeaderSignature)); n != 2 || !signedBy(probe, 0, ownSecret) || !signedBy(probe, 1, secondSecret) {
		t.Errorf("probe after a second rotation: %d signature lines, want the own secret's then the second one's", n)
	}

	listed := reads.add(h.v1(t, http.StatusOK, key, "GET", "/v1/subscriptions", ""))
	if items := listed.body["items"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != id || listed.body["next_cursor"] != nil {
		t.Errorf("list %s", listed.raw)
	}

	// Delete: 200 with what went, then the subscription is gone.
	deleted := reads.add(h.v1(t, http.StatusOK, key, "DELETE", path, ""))
	if deleted.body["id"] != id || deleted.body["canceled_jobs"] != float64(0) {
		t.Errorf("delete %s", deleted.raw)
	}
	for _, method := range []string{"GET", "DELETE"} {
		if r := reads.add(h.v1(t, http.StatusNotFound, key, method, path, "")); r.body["code"] != "subscription_not_found" {
			t.Errorf("%s after delete: %s", method, r.raw)
		}
	}
	if empty := reads.add(h.v1(t, http.StatusOK, key, "GET", "/v1/subscriptions", "")); len(empty.body["items"].([]any)) != 0 {
		t.Errorf("list after delete %s", empty.raw)
	}

	h.stop()
	secrets := []string{firstSecret, secondSecret, ownSecret}
	reads.check(t, secrets...)
	logs := h.logs.String()
	for _, secret := range secrets {
		assertNoSecret(t, "the log", logs, secret)
	}
}

func TestPullSubscription(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, key := h.tenantWithKey(t, "acme")

	created := h.v1(t, http.StatusCreated, key, "POST", "/v1/subscriptions", pullBody)
	if _, present := created.body["signing_secret"]; present || created.body["verification_state"] != "active" ||
		fmt.Sprint(created.body["sink"]) != "map[type:pull]" {
		t.Fatalf("created %s", created.raw)
	}
	path := "/v1/subscriptions/" + created.body["id"].(string)
	if r := h.v1(t, http.StatusOK, key, "POST", path+"/verify", ""); r.body["verification_state"] != "active" {
		t.Errorf("verify %s", r.raw)
	}
	if r := h.v1(t, http.StatusConflict, key, "POST", path+"/rotate-secret", ""); r.body["code"] != "not_a_webhook_subscription" {
		t.Errorf("rotate a pull subscription's secret: %s", r.raw)
	}
	if r := h.v1(t, http.StatusOK, key, "PATCH", path, `{"event_types":["account.created","account.*"]}`); fmt.Sprint(r.body["event_types"]) != "[account.created account.*]" {
		t.Errorf("patch %s", r.raw)
	}
	h.v1(t, http.StatusOK, key, "DELETE", path, "")
}

// TestSubscriptionLimit: past STREAMING_HUB_MAX_SUBSCRIPTIONS_PER_TENANT
// a create is 409 subscription_limit_reached, for that tenant only, until
// one is deleted.
func TestSubscriptionLimit(t *testing.T) {
	h := newHarnessWith(t, testAdminToken, service.SubscriptionOptions{RotationOverlap: testRotationOverlap, MaxPerTenant: 2})
	_, acme := h.tenantWithKey(t, "acme")
	_, globex := h.tenantWithKey(t, "globex")
	first := h.v1(t, http.StatusCreated, acme, "POST", "/v1/subscriptions", pullBody).body["id"].(string)
	h.v1(t, http.StatusCreated, acme, "POST", "/v1/subscriptions", pullBody)

	refused := h.v1(t, http.StatusConflict, acme, "POST", "/v1/subscriptions", pullBody)
	if refused.body["code"] != "subscription_limit_reached" ||
		!strings.Contains(fmt.Sprint(refused.body["message"]), "STREAMING_HUB_MAX_SUBSCRIPTIONS_PER_TENANT") {
		t.Errorf("create past the limit: %s", refused.raw)
	}
	h.v1(t, http.StatusCreated, globex, "POST", "/v1/subscriptions", pullBody)
	h.v1(t, http.StatusOK, acme, "DELETE", "/v1/subscriptions/"+first, "")
	h.v1(t, http.StatusCreated, acme, "POST", "/v1/subscriptions", pullBody)
}

func TestSubscriptionListPaging(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, key := h.tenantWithKey(t, "acme")
	var want []string
	for range 3 {
		want = append(want, h.v1(t, http.StatusCreated, key, "POST", "/v1/subscriptions", pullBody).body["id"].(string))
	}

	pages := 0
	var ids []string
	path := "/v1/subscriptions?limit=2"
	for {
		page := h.v1(t, http.StatusOK, key, "GET", path, "")
		pages++
		for _, item := range page.body["items"].([]any) {
			ids = append(ids, item.(map[string]any)["id"].(string))
		}
		next, ok := page.body["next_cursor"].(string)
		if !ok || pages > len(want) {
			break
		}
		path = "/v1/subscriptions?limit=2&cursor=" + url.QueryEscape(next)
	}
	if fmt.Sprint(ids) != fmt.Sprint(want) || pages != 2 {
		t.Errorf("paged %v in %d pages, want %v in 2, oldest first", ids, pages, want)
	}

	// The admin token, acting on acme, sees the same listing.
	asAdmin := h.must(t, http.StatusOK, call{method: "GET", path: "/v1/subscriptions?limit=10", token: testAdminToken, header: map[string]string{HeaderTenantID: "acme"}})
	if n := len(asAdmin.body["items"].([]any)); n != len(want) {
		t.Errorf("the admin on acme lists %d subscriptions, want %d", n, len(want))
	}
}

// TestSubscriptionVerificationFailure: a destination that refuses the
// probe leaves a failed subscription on create (still 201), and makes
// verify answer 422 until it accepts.
func TestSubscriptionVerificationFailure(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, key := h.tenantWithKey(t, "acme")
	rcv := newReceiver(t, http.StatusInternalServerError)

	created := h.v1(t, http.StatusCreated, key, "POST", "/v1/subscriptions", webhookBody(rcv))
	failure, _ := created.body["verification_error"].(string)
	if created.body["verification_state"] != "failed" || !strings.Contains(failure, "500") || created.body["signing_secret"] == nil {
		t.Fatalf("created %s", created.raw)
	}
	path := "/v1/subscriptions/" + created.body["id"].(string)
	if got := h.v1(t, http.StatusOK, key, "GET", path, ""); got.body["verification_state"] != "failed" || got.body["verification_error"] != failure {
		t.Errorf("get after a failed create %s", got.raw)
	}

	refused := h.v1(t, http.StatusUnprocessableEntity, key, "POST", path+"/verify", "")
	message, _ := refused.body["message"].(string)
	if refused.body["code"] != "verification_failed" || !strings.Contains(message, "500") || !strings.Contains(message, "receiver answered 500") {
		t.Errorf("verify against a failing receiver: %s", refused.raw)
	}

	// Recovery in place: the destination is fixed, verify enables it again.
	h.v1(t, http.StatusOK, key, "POST", path+"/disable", "")
	rcv.answer(http.StatusNoContent)
	recovered := h.v1(t, http.StatusOK, key, "POST", path+"/verify", "")
	if recovered.body["verification_state"] != "active" || recovered.body["enabled"] != true {
		t.Errorf("verify after the fix %s", recovered.raw)
	}
	if _, present := recovered.body["verification_error"]; present {
		t.Errorf("a recovered subscription keeps its verification_error: %s", recovered.raw)
	}

	// Pointing the sink elsewhere verifies the new destination at once.
	broken := newReceiver(t, http.StatusBadGateway)
	moved := h.v1(t, http.StatusOK, key, "PATCH", path, `{"sink":{"type":"webhook","url":"`+broken.url+`"}}`)
	if moved.body["verification_state"] != "failed" || len(broken.Requests()) != 1 {
		t.Errorf("patch to a failing destination %s", moved.raw)
	}
}

// TestSubscriptionValidationErrors sends every way of getting each
// subscription endpoint's input wrong and checks the status, code and the
// field or offset named.
func TestSubscriptionValidationErrors(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, key := h.tenantWithKey(t, "acme")
	rcv := newReceiver(t, http.StatusOK)
	hook := "/v1/subscriptions/" + h.v1(t, http.StatusCreated, key, "POST", "/v1/subscriptions", webhookBody(rcv)).body["id"].(string)
	pull := "/v1/subscriptions/" + h.v1(t, http.StatusCreated, key, "POST", "/v1/subscriptions", pullBody).body["id"].(string)

	// create builds a create body from a valid one with one field replaced
	// (or removed, for "").
	create := func(field, value string) string {
		fields := map[string]string{
			"name":        `"orders"`,
			"sink":        `{"type":"webhook","url":"` + rcv.url + `"}`,
			"event_types": `["transaction.*"]`,
		}
		fields[field] = value
		var parts []string
		for _, name := range []string{"name", "sink", "event_types", "schema_major", "origin", "retry_schedule", "attempt_timeout", "enabled", "signing_secret", "color"} {
			if v := fields[name]; v != "" {
				parts = append(parts, `"`+name+`":`+v)
			}
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	thirteenSteps := `["` + strings.Repeat(`1s","`, 12) + `1s"]`

	cases := []struct {
		name         string
		method, path string
		body         string
		status       int
		code         string
		field        string // details.field, when the error names one
		detail       string // another details key that must be present
	}{
		{"sink missing", "POST", "/v1/subscriptions", create("sink", ""), 400, "invalid_sink", "sink", ""},
		{"sink not an object", "POST", "/v1/subscriptions", create("sink", `"webhook"`), 400, "invalid_sink", "sink", ""},
		{"sink without type", "POST", "/v1/subscriptions", create("sink", `{"url":"`+rcv.url+`"}`), 400, "invalid_sink", "sink.type", ""},
		{"sink of unknown type", "POST", "/v1/subscriptions", create("sink", `{"type":"carrier-pigeon"}`), 400, "invalid_sink", "sink.type", ""},
		{"webhook without url", "POST", "/v1/subscriptions", create("sink", `{"type":"webhook"}`), 400, "invalid_sink", "sink.url", ""},
		{"webhook url not http", "POST", "/v1/subscriptions", create("sink", `{"type":"webhook","url":"ftp://example.com/x"}`), 400, "invalid_sink", "sink.url", ""},
		{"webhook url not a string", "POST", "/v1/subscriptions", create("sink", `{"type":"webhook","url":7}`), 400, "invalid_sink", "sink.url", ""},
		{"retry schedule empty", "POST", "/v1/subscriptions", create("retry_schedule", `[]`), 400, "invalid_retry_schedule", "retry_schedule", ""},
		{"retry schedule of 13 steps", "POST", "/v1/subscriptions", create("retry_schedule", thirteenSteps), 400, "invalid_retry_schedule", "retry_schedule", ""},
		{"retry step negative", "POST", "/v1/subscriptions", create("retry_schedule", `["1s","-1s"]`), 400, "invalid_retry_schedule", "retry_schedule", ""},
		{"retry step over 10h", "POST", "/v1/subscriptions", create("retry_schedule", `["10h0m1s"]`), 400, "invalid_retry_schedule", "retry_schedule", ""},
		{"retry step not a duration", "POST", "/v1/subscriptions", create("retry_schedule", `["soon"]`), 400, "invalid_retry_schedule", "retry_schedule", ""},
		{"name too long", "POST", "/v1/subscriptions", create("name", `"`+strings.Repeat("n", 201)+`"`), 400, "invalid_request", "name", ""},
		{"name with NUL", "POST", "/v1/subscriptions", create("name", `"a\u0000b"`), 400, "invalid_request", "name", ""},
		{"event types missing", "POST", "/v1/subscriptions", create("event_types", ""), 400, "invalid_request", "event_types", ""},
		{"event types empty", "POST", "/v1/subscriptions", create("event_types", `[]`), 400, "invalid_request", "event_types", ""},
		{"event type malformed", "POST", "/v1/subscriptions", create("event_types", `["Transaction Posted"]`), 400, "invalid_request", "event_types", ""},
		{"schema major zero", "POST", "/v1/subscriptions", create("schema_major", `0`), 400, "invalid_request", "schema_major", ""},
		{"schema major fractional", "POST", "/v1/subscriptions", create("schema_major", `1.5`), 400, "invalid_request", "schema_major", ""},
		{"origin empty", "POST", "/v1/subscriptions", create("origin", `""`), 400, "invalid_request", "origin", ""},
		{"attempt timeout too short", "POST", "/v1/subscriptions", create("attempt_timeout", `"500ms"`), 400, "invalid_request", "attempt_timeout", ""},
		{"attempt timeout too long", "POST", "/v1/subscriptions", create("attempt_timeout", `"61s"`), 400, "invalid_request", "attempt_timeout", ""},
		{"attempt timeout not a duration", "POST", "/v1/subscriptions", create("attempt_timeout", `"soon"`), 400, "invalid_request", "attempt_timeout", ""},
		{"enabled not a bool", "POST", "/v1/subscriptions", create("enabled", `"yes"`), 400, "invalid_request", "enabled", ""},
		{"signing secret short", "POST", "/v1/subscriptions", create("signing_secret", `"too-short"`), 400, "invalid_request", "signing_secret", ""},
		{"signing secret on pull", "POST", "/v1/subscriptions", `{"name":"p","sink":{"type":"pull"},"event_types":["*"],"signing_secret":"` + strings.Repeat("s", 32) + `"}`, 400, "invalid_request", "signing_secret", ""},
		{"unknown field", "POST", "/v1/subscriptions", create("color", `"red"`), 400, "invalid_request", "color", ""},
		{"not JSON", "POST", "/v1/subscriptions", `name=orders`, 400, "invalid_request", "", "offset"},
		{"empty body", "POST", "/v1/subscriptions", ``, 400, "invalid_request", "", ""},
		{"truncated body", "POST", "/v1/subscriptions", `{"name":"orders"`, 400, "invalid_request", "", "offset"},

		{"list limit zero", "GET", "/v1/subscriptions?limit=0", "", 400, "invalid_request", "limit", ""},
		{"list limit not a number", "GET", "/v1/subscriptions?limit=ten", "", 400, "invalid_request", "limit", ""},
		{"list limit too big", "GET", "/v1/subscriptions?limit=5000", "", 400, "invalid_request", "limit", ""},
		{"list cursor forged", "GET", "/v1/subscriptions?cursor=nope", "", 400, "invalid_request", "cursor", ""},
		{"list cursor given twice", "GET", "/v1/subscriptions?cursor=a&cursor=b", "", 400, "invalid_request", "cursor", ""},

		{"patch sink type change", "PATCH", hook, `{"sink":{"type":"pull"}}`, 400, "invalid_sink", "sink.type", ""},
		{"patch sink invalid", "PATCH", hook, `{"sink":{"type":"webhook","url":"not a url"}}`, 400, "invalid_sink", "sink.url", ""},
		{"patch retry schedule empty", "PATCH", hook, `{"retry_schedule":[]}`, 400, "invalid_retry_schedule", "retry_schedule", ""},
		{"patch retry step over 10h", "PATCH", hook, `{"retry_schedule":["11h"]}`, 400, "invalid_retry_schedule", "retry_schedule", ""},
		{"patch event types empty", "PATCH", hook, `{"event_types":[]}`, 400, "invalid_request", "event_types", ""},
		{"patch name too long", "PATCH", hook, `{"name":"` + strings.Repeat("n", 201) + `"}`, 400, "invalid_request", "name", ""},
		{"patch schema major zero", "PATCH", hook, `{"schema_major":0}`, 400, "invalid_request", "schema_major", ""},
		{"patch origin empty", "PATCH", hook, `{"origin":""}`, 400, "invalid_request", "origin", ""},
		{"patch attempt timeout", "PATCH", hook, `{"attempt_timeout":"2m"}`, 400, "invalid_request", "attempt_timeout", ""},
		{"patch signing secret short", "PATCH", hook, `{"signing_secret":"short"}`, 400, "invalid_request", "signing_secret", ""},
		{"patch signing secret on pull", "PATCH", pull, `{"signing_secret":"` + strings.Repeat("s", 32) + `"}`, 400, "invalid_request", "signing_secret", ""},
		{"patch id", "PATCH", hook, `{"id":"0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b"}`, 400, "invalid_request", "id", ""},
		{"patch enabled as a string", "PATCH", hook, `{"enabled":"false"}`, 400, "invalid_request", "enabled", ""},
		{"patch array body", "PATCH", hook, `[]`, 400, "invalid_request", "", "offset"},

		{"rotate to a short secret", "POST", hook + "/rotate-secret", `{"signing_secret":"short"}`, 400, "invalid_request", "signing_secret", ""},
		{"rotate with unknown field", "POST", hook + "/rotate-secret", `{"secret":"` + strings.Repeat("s", 32) + `"}`, 400, "invalid_request", "secret", ""},
		{"rotate a pull subscription", "POST", pull + "/rotate-secret", ``, 409, "not_a_webhook_subscription", "", ""},
		{"verify with a body", "POST", hook + "/verify", `{"force":true}`, 400, "invalid_request", "force", ""},
		{"enable with a non-object", "POST", hook + "/enable", `true`, 400, "invalid_request", "", "offset"},
		{"disable with a body", "POST", hook + "/disable", `{"reason":"x"}`, 400, "invalid_request", "reason", ""},
		{"delete with a body", "DELETE", hook, `{"cascade":true}`, 400, "invalid_request", "cascade", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.send(t, call{method: c.method, path: c.path, token: key, body: c.body})
			if r.status != c.status || r.body["code"] != c.code || r.body["message"] == "" {
				t.Fatalf("= %d %s, want %d %s", r.status, r.raw, c.status, c.code)
			}
			details, _ := r.body["details"].(map[string]any)
			if c.field != "" && details["field"] != c.field {
				t.Errorf("details.field = %v, want %q: %s", details["field"], c.field, r.raw)
			}
			if c.detail != "" && details[c.detail] == nil {
				t.Errorf("details.%s missing: %s", c.detail, r.raw)
			}
		})
	}

	// Nothing refused above changed anything.
	got := h.v1(t, http.StatusOK, key, "GET", hook, "")
	if got.body["name"] != "orders" || got.body["enabled"] != true || got.body["previous_secret_expires_at"] != nil {
		t.Errorf("the subscription changed under refused requests: %s", got.raw)
	}
	if list := h.v1(t, http.StatusOK, key, "GET", "/v1/subscriptions", ""); len(list.body["items"].([]any)) != 2 {
		t.Errorf("refused creates created something: %s", list.raw)
	}
}

// subscriptionRoutes is every route under /v1/subscriptions with a body
// that would succeed, for tests that must try them all.
func subscriptionRoutes(id string) []call {
	path := "/v1/subscriptions/" + id
	return []call{
		{method: "POST", path: "/v1/subscriptions", body: pullBody},
		{method: "GET", path: "/v1/subscriptions"},
		{method: "GET", path: path},
		{method: "PATCH", path: path, body: `{"name":"taken over"}`},
		{method: "POST", path: path + "/verify"},
		{method: "POST", path: path + "/rotate-secret"},
		{method: "POST", path: path + "/enable"},
		{method: "POST", path: path + "/disable"},
		{method: "DELETE", path: path},
	}
}

// TestSubscriptionIDsThatDoNotExist: an id that is not a UUID answers like
// a UUID no subscription has, on every verb.
func TestSubscriptionIDsThatDoNotExist(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, key := h.tenantWithKey(t, "acme")
	for _, id := range []string{"0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b", "not-a-uuid", "42", "%00"} {
		for _, c := range subscriptionRoutes(id)[2:] {
			c.token = key
			if r := h.send(t, c); r.status != http.StatusNotFound || r.body["code"] != "subscription_not_found" {
				t.Errorf("%s %s = %d %s, want 404 subscription_not_found", c.method, c.path, r.status, r.raw)
			}
		}
	}
}

func TestSubscriptionAuthFailures(t *testing.T) {
	h := newHarness(t, testAdminToken)
	revokedID, revoked := h.tenantWithKey(t, "acme")
	h.admin(t, http.StatusOK, "DELETE", "/admin/tenants/acme/keys/"+revokedID, "")
	_, key := h.tenantWithKey(t, "globex")
	id := h.v1(t, http.StatusCreated, key, "POST", "/v1/subscriptions", pullBody).body["id"].(string)

	credentials := []struct {
		name   string
		header map[string]string
		status int
		code   string
	}{
		{"no token", map[string]string{}, 401, "unauthorized"},
		{"bad token", map[string]string{"Authorization": "Bearer hub_not-a-real-key"}, 401, "unauthorized"},
		{"revoked key", map[string]string{"Authorization": "Bearer " + revoked}, 401, "unauthorized"},
		{"admin without X-Tenant-Id", map[string]string{"Authorization": "Bearer " + testAdminToken}, 400, "invalid_request"},
	}
	for _, cred := range credentials {
		for _, c := range subscriptionRoutes(id) {
			c.header = cred.header
			if r := h.send(t, c); r.status != cred.status || r.body["code"] != cred.code {
				t.Errorf("%s: %s %s = %d %s, want %d %s", cred.name, c.method, c.path, r.status, r.raw, cred.status, cred.code)
			}
		}
	}
	// None of them reached the subscription.
	if got := h.v1(t, http.StatusOK, key, "GET", "/v1/subscriptions/"+id, ""); got.body["name"] != "ledger feed" {
		t.Errorf("the subscription changed: %s", got.raw)
	}

	// The admin token names the tenant it acts on, and acts as it.
	asAdmin := h.must(t, http.StatusCreated, call{method: "POST", path: "/v1/subscriptions", body: pullBody,
		token: testAdminToken, header: map[string]string{HeaderTenantID: "globex"}})
	if asAdmin.body["tenant_id"] != "globex" {
		t.Errorf("the admin created for %v, want globex", asAdmin.body["tenant_id"])
	}
	h.v1(t, http.StatusOK, key, "GET", "/v1/subscriptions/"+asAdmin.body["id"].(string), "")
}

// TestSubscriptionsCrossTenant: another tenant's subscription answers
// exactly like a missing one on every verb, and is left untouched.
func TestSubscriptionsCrossTenant(t *testing.T) {
	h := newHarness(t, testAdminToken)
	_, acmeKey := h.tenantWithKey(t, "acme")
	_, globexKey := h.tenantWithKey(t, "globex")
	rcv := newReceiver(t, http.StatusOK)
	created := h.v1(t, http.StatusCreated, acmeKey, "POST", "/v1/subscriptions", webhookBody(rcv))
	id := created.body["id"].(string)
	const missing = "0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b"

	intruders := []struct {
		name   string
		header map[string]string
	}{
		{"globex's key", map[string]string{"Authorization": "Bearer " + globexKey}},
		{"the admin acting on globex", map[string]string{"Authorization": "Bearer " + testAdminToken, HeaderTenantID: "globex"}},
	}
	for _, intruder := range intruders {
		routes, missingRoutes := subscriptionRoutes(id)[2:], subscriptionRoutes(missing)[2:]
		for i, c := range routes {
			c.header = intruder.header
			r := h.send(t, c)
			miss := missingRoutes[i]
			miss.header = intruder.header
			m := h.send(t, miss)
			sameMessage := strings.ReplaceAll(r.raw, id, missing) == m.raw
			if r.status != http.StatusNotFound || r.body["code"] != "subscription_not_found" || !sameMessage {
				t.Errorf("%s: %s %s = %d %s; a missing id answers %d %s", intruder.name, c.method, c.path, r.status, r.raw, m.status, m.raw)
			}
		}
		list := h.send(t, call{method: "GET", path: "/v1/subscriptions", header: intruder.header})
		if list.status != http.StatusOK || len(list.body["items"].([]any)) != 0 {
			t.Errorf("%s lists %s", intruder.name, list.raw)
		}
	}

	got := h.v1(t, http.StatusOK, acmeKey, "GET", "/v1/subscriptions/"+id, "")
	if got.body["name"] != "orders" || got.body["enabled"] != true || got.body["previous_secret_expires_at"] != nil || got.body["updated_at"] != created.body["updated_at"] {
		t.Errorf("acme's subscription changed: %s", got.raw)
	}
	if probes := len(rcv.Requests()); probes != 1 {
		t.Errorf("acme's destination got %d probes, want only the create's", probes)
	}
}
