package kek_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/pkg/webhook"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func key(label string) string {
	sum := sha256.Sum256([]byte("hubctl kek runbook: " + label))
	return base64.StdEncoding.EncodeToString(sum[:])
}

type status struct {
	ActiveKeyID string         `json:"active_key_id"`
	Envelopes   map[string]int `json:"envelopes"`
	Outdated    int            `json:"outdated"`
}

type reencrypted struct {
	DryRun      bool `json:"dry_run"`
	Examined    int  `json:"examined"`
	Reencrypted int  `json:"reencrypted"`
	Failed      []struct {
		SubscriptionID string `json:"subscription_id"`
		Column         string `json:"column"`
	} `json:"failed"`
}

// TestKEKRotationRunbook follows docs/operating.md, "Rotating the
// key-encryption key", step by step, on a real database, with a webhook
// subscription in the middle of a secret rotation (two stored secrets). The
// receiver checks every probe's signature, so "the secret still works" is
// checked at the destination, not only by decrypting.
func TestKEKRotationRunbook(t *testing.T) {
	dsn := pgtest.DSN(t)
	const first, second = "whsec_runbook-first-secret-0000000001", "whsec_runbook-second-secret-000000002"
	var verified atomic.Int32
	receiver := httptest.NewServer(webhook.RequireSignature([]string{second}, 0, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		verified.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})))
	defer receiver.Close()

	oldKey, newKey := key("old"), key("new")
	withKEK := func(value string) map[string]string {
		return map[string]string{
			"STREAMING_HUB_POSTGRES_DSN":        dsn,
			"STREAMING_HUB_KEK_REF":             "HUB_KEK",
			"HUB_KEK":                           value,
			"STREAMING_HUB_ALLOW_PRIVATE_SINKS": "true",
		}
	}
	run := func(env map[string]string, args ...string) clitest.Result {
		t.Helper()
		res := clitest.Run(t, env, args...)
		if res.Code != 0 {
			t.Fatalf("hubctl %s: exit %d\n%s", strings.Join(args, " "), res.Code, res.Stderr)
		}
		return res
	}
	kekStatus := func(env map[string]string) status {
		t.Helper()
		var s status
		if err := json.Unmarshal([]byte(run(env, "kek", "status", "-o", "json").Stdout), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	verify := func(env map[string]string, id string) {
		t.Helper()
		before := verified.Load()
		run(env, "subs", "verify", "--tenant", "acme", id)
		if verified.Load() != before+1 {
			t.Fatal("the receiver did not get a probe it could verify")
		}
	}

	// Before: the hub runs with one unnamed key; a subscription is in the
	// middle of a secret rotation, so it stores two sealed secrets.
	before := withKEK(oldKey)
	run(before, "tenants", "create", "acme")
	var sub struct {
		ID string `json:"id"`
	}
	created := run(before, "subs", "create", "--tenant", "acme", "--name", "hook", "--type", "webhook",
		"--url", receiver.URL, "--event-types", "*", "--signing-secret", first, "-o", "json")
	if err := json.Unmarshal([]byte(created.Stdout), &sub); err != nil || sub.ID == "" {
		t.Fatalf("subs create printed %q: %v", created.Stdout, err)
	}
	run(before, "subs", "rotate-secret", "--tenant", "acme", sub.ID, "--signing-secret", second)
	verify(before, sub.ID)

	// Step 1: the current key's id.
	s := kekStatus(before)
	oldID := s.ActiveKeyID
	if !strings.HasPrefix(oldID, "k") || s.Envelopes[oldID] != 2 || s.Outdated != 0 {
		t.Fatalf("step 1: status %+v; want 2 envelopes under the unnamed key's id", s)
	}

	// Step 2: the new key added, not yet active.
	added := withKEK(oldID + ":" + oldKey + ",2026-12:" + newKey)
	if s := kekStatus(added); s.ActiveKeyID != oldID || s.Outdated != 0 {
		t.Fatalf("step 2: status %+v; the old key must still be active", s)
	}
	verify(added, sub.ID)

	// Step 3: the new key active. What is stored is now outdated.
	active := withKEK("2026-12:" + newKey + "," + oldID + ":" + oldKey)
	if s := kekStatus(active); s.ActiveKeyID != "2026-12" || s.Outdated != 2 {
		t.Fatalf("step 3: status %+v; want 2 outdated envelopes", s)
	}
	verify(active, sub.ID)

	// Dropping the old key now would be too early: the new key alone
	// cannot open what is stored, and reencrypt says which secrets.
	early := withKEK("2026-12:" + newKey)
	res := clitest.Run(t, early, "kek", "reencrypt", "-o", "json")
	var tooEarly reencrypted
	_ = json.Unmarshal([]byte(res.Stdout), &tooEarly)
	if res.Code != 1 || len(tooEarly.Failed) != 2 || tooEarly.Failed[0].SubscriptionID != sub.ID || !strings.Contains(res.Stderr, "could not be opened") {
		t.Fatalf("reencrypt without the old key: exit %d, %+v, stderr %q; want exit 1 naming both secrets", res.Code, tooEarly, res.Stderr)
	}
	if res := clitest.Run(t, early, "subs", "verify", "--tenant", "acme", sub.ID); res.Code == 0 || !strings.Contains(res.Stderr, oldID) {
		t.Fatalf("subs verify without the old key: exit %d, stderr %q; want a failure naming key %s", res.Code, res.Stderr, oldID)
	}

	// Step 4: re-encrypt, a dry run first.
	var dry, done reencrypted
	if err := json.Unmarshal([]byte(run(active, "kek", "reencrypt", "--dry-run", "-o", "json").Stdout), &dry); err != nil {
		t.Fatal(err)
	}
	if !dry.DryRun || dry.Reencrypted != 2 || kekStatus(active).Outdated != 2 {
		t.Fatalf("step 4 dry run: %+v; want 2 to move and nothing moved", dry)
	}
	if err := json.Unmarshal([]byte(run(active, "kek", "reencrypt", "-o", "json").Stdout), &done); err != nil {
		t.Fatal(err)
	}
	if done.Reencrypted != 2 || len(done.Failed) != 0 {
		t.Fatalf("step 4: %+v; want 2 re-encrypted", done)
	}
	if s := kekStatus(active); s.Outdated != 0 || s.Envelopes["2026-12"] != 2 {
		t.Fatalf("step 4 status: %+v; want both envelopes under 2026-12", s)
	}

	// Step 5: the old key dropped. Both secrets still sign what the
	// receiver accepts.
	after := withKEK("2026-12:" + newKey)
	verify(after, sub.ID)
	if s := kekStatus(after); s.ActiveKeyID != "2026-12" || s.Outdated != 0 {
		t.Fatalf("step 5: status %+v", s)
	}
	table := run(after, "kek", "status", "-o", "table").Stdout
	if !strings.Contains(table, "2026-12") || !strings.Contains(table, "active") || strings.Contains(table, "outdated") {
		t.Errorf("status table:\n%s", table)
	}
}

func TestKEKNeedsTheDatabase(t *testing.T) {
	res := clitest.Run(t, map[string]string{"STREAMING_HUB_KEK_REF": "HUB_KEK", "HUB_KEK": key("x")}, "kek", "status")
	if res.Code != 2 || !strings.Contains(res.Stderr, "STREAMING_HUB_POSTGRES_DSN") {
		t.Errorf("kek status without a database: exit %d, stderr %q; want exit 2 naming the setting", res.Code, res.Stderr)
	}
}
