package service_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// keyValue is a 32-byte key, base64, derived from a label.
func keyValue(label string) string {
	sum := sha256.Sum256([]byte("hubctl kek test: " + label))
	return base64.StdEncoding.EncodeToString(sum[:])
}

func keyringOf(t *testing.T, value string) *crypto.Keyring {
	t.Helper()
	keys, err := crypto.ParseKeyring(value)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestKEKRotation walks the rotation as docs/operating.md tells it: the
// secrets stored under the old key, a keyring with the new key first and
// the old one after, a dry run, the pass, a status with nothing outdated,
// and the new key alone opening everything.
func TestKEKRotation(t *testing.T) {
	ctx := context.Background()
	f := newSubsFixture(t, true)
	oldID := f.keys.ActiveKeyID()

	webhook, secret := f.create(t, "acme", webhookInput("https://hooks.test/a"))
	rotation, err := f.svc.RotateSecret(ctx, "acme", webhook.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	queue, _ := f.create(t, "globex", hubapi.SubscriptionCreate{
		Name: "queue", Sink: json.RawMessage(`{"type": "sqs", "url": "https://sqs.test/q", "token": "tok-123"}`),
		EventTypes: []string{"*"},
	})
	f.create(t, "acme", hubapi.SubscriptionCreate{Name: "pull", Sink: json.RawMessage(`{"type": "pull"}`), EventTypes: []string{"*"}})
	deleted, _ := f.create(t, "acme", webhookInput("https://hooks.test/gone"))
	if _, err := f.svc.Delete(ctx, "acme", deleted.ID); err != nil {
		t.Fatal(err)
	}
	before := map[string]rawRow{webhook.ID: f.raw(t, webhook.ID), queue.ID: f.raw(t, queue.ID)}

	rotating := keyringOf(t, "new:"+keyValue("new")+","+oldID+":"+base64.StdEncoding.EncodeToString(testKeyMaterial()))
	kek := service.NewKEK(f.st.Catalog, rotating)

	status, err := kek.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if status.ActiveKeyID != "new" || status.Envelopes[oldID] != 3 || len(status.Envelopes) != 1 || status.Outdated != 3 {
		t.Fatalf("status before = %+v (outdated %d); want 3 envelopes under %s, all outdated", status, status.Outdated, oldID)
	}

	dry, err := kek.Reencrypt(ctx, service.ReencryptOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !dry.DryRun || dry.Examined != 3 || dry.Reencrypted != 3 || dry.Current != 0 || len(dry.Failed) != 0 {
		t.Errorf("dry run = %+v; want 3 examined, 3 to re-encrypt", dry)
	}
	for id, row := range before {
		if after := f.raw(t, id); *after.secretOrCredentials() != *row.secretOrCredentials() {
			t.Errorf("the dry run wrote subscription %s", id)
		}
	}

	done, err := kek.Reencrypt(ctx, service.ReencryptOptions{BatchSize: 1}) // pages of one row: the walk's paging is exercised
	if err != nil {
		t.Fatal(err)
	}
	if done.Examined != 3 || done.Reencrypted != 3 || done.Current != 0 || len(done.Failed) != 0 {
		t.Errorf("pass = %+v; want 3 re-encrypted", done)
	}
	status, err = kek.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if status.Envelopes["new"] != 3 || len(status.Envelopes) != 1 || status.Outdated != 0 {
		t.Errorf("status after = %+v; want all 3 envelopes under new", status)
	}

	// The old key can go: the new one alone opens every secret, for the
	// row and column it belongs to, and the rows' versions did not move.
	newOnly := keyringOf(t, "new:"+keyValue("new"))
	w := f.raw(t, webhook.ID)
	assertOpens(t, newOnly, *w.secret, webhook.ID, catalog.ColumnSigningSecret, rotation.SigningSecret)
	assertOpens(t, newOnly, *w.previous, webhook.ID, catalog.ColumnPreviousSecret, secret)
	q := f.raw(t, queue.ID)
	assertOpens(t, newOnly, *q.credentials, queue.ID, catalog.ColumnSinkCredentials, `{"token":"tok-123"}`)
	for id, row := range before {
		if after := f.raw(t, id); !after.updatedAt.Equal(*row.updatedAt) {
			t.Errorf("re-encryption moved updated_at of %s from %v to %v", id, row.updatedAt, after.updatedAt)
		}
	}

	again, err := kek.Reencrypt(ctx, service.ReencryptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Reencrypted != 0 || again.Current != 3 {
		t.Errorf("second pass = %+v; want nothing to do", again)
	}
}

func TestKEKReencryptReportsWhatItCannotOpen(t *testing.T) {
	ctx := context.Background()
	f := newSubsFixture(t, true)
	oldID := f.keys.ActiveKeyID()
	good, _ := f.create(t, "acme", webhookInput("https://hooks.test/good"))
	stray, _ := f.create(t, "acme", webhookInput("https://hooks.test/stray"))
	// A secret sealed under a key nobody configured (lost, or from another
	// hub's database restored here).
	strayKeys := keyringOf(t, "stray:"+keyValue("stray"))
	envelope, err := strayKeys.Encrypt([]byte("whsec_x"), stray.ID, catalog.ColumnSigningSecret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Pool.Exec(ctx, `UPDATE subscriptions SET signing_secret = $2 WHERE id = $1`, stray.ID, envelope); err != nil {
		t.Fatal(err)
	}
	strayBefore := *f.raw(t, stray.ID).secret

	kek := service.NewKEK(f.st.Catalog, keyringOf(t, "new:"+keyValue("new")+","+oldID+":"+base64.StdEncoding.EncodeToString(testKeyMaterial())))
	result, err := kek.Reencrypt(ctx, service.ReencryptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if result.Reencrypted != 1 || len(result.Failed) != 1 {
		t.Fatalf("result = %+v; want the good secret moved and the stray one reported", result)
	}
	failure := result.Failed[0]
	if failure.SubscriptionID != stray.ID || failure.Column != catalog.ColumnSigningSecret || !strings.Contains(failure.Reason, `"stray" is not in the keyring`) {
		t.Errorf("failure = %+v; want subscription %s, signing_secret, naming the unknown key", failure, stray.ID)
	}
	if got := *f.raw(t, stray.ID).secret; got != strayBefore {
		t.Error("the envelope that could not be opened was changed")
	}
	if id, _ := crypto.EnvelopeKeyID(*f.raw(t, good.ID).secret); id != "new" {
		t.Errorf("the good row is under %q, want new", id)
	}
	status, err := kek.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if status.Outdated != 1 || status.Envelopes["stray"] != 1 {
		t.Errorf("status = %+v; want the stray envelope still outdated", status)
	}
}

// TestReplaceSealedSecretsLosesToAConcurrentChange: a row rewritten since
// it was read (a rotation, say) is not overwritten with what was read.
func TestReplaceSealedSecretsLosesToAConcurrentChange(t *testing.T) {
	ctx := context.Background()
	f := newSubsFixture(t, true)
	sub, _ := f.create(t, "acme", webhookInput("https://hooks.test/a"))
	id := uuid.MustParse(sub.ID)
	read, err := f.st.SealedSecretsOf(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.RotateSecret(ctx, "acme", sub.ID, ""); err != nil {
		t.Fatal(err)
	}
	rotated := f.raw(t, sub.ID)
	next := read
	next.SigningSecret = "v1:new:stale"
	written, err := f.st.ReplaceSealedSecrets(ctx, read, next)
	if err != nil || written {
		t.Fatalf("ReplaceSealedSecrets over a changed row = %v, %v; want false", written, err)
	}
	if got := f.raw(t, sub.ID); *got.secret != *rotated.secret || *got.previous != *rotated.previous {
		t.Error("the rotation was overwritten")
	}
	current, err := f.st.SealedSecretsOf(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	next = current
	next.PreviousSecret = ""
	if written, err := f.st.ReplaceSealedSecrets(ctx, current, next); err != nil || !written {
		t.Fatalf("ReplaceSealedSecrets over the current row = %v, %v; want true", written, err)
	}
	if got := f.raw(t, sub.ID); got.previous != nil {
		t.Error("an empty envelope was not stored as NULL")
	}
}

func assertOpens(t *testing.T, keys *crypto.Keyring, envelope, rowID, column, want string) {
	t.Helper()
	plaintext, err := keys.Decrypt(envelope, rowID, column)
	if err != nil || string(plaintext) != want {
		t.Errorf("%s of %s opens to %q, %v; want %q", column, rowID, plaintext, err, want)
	}
}

func (r rawRow) secretOrCredentials() *string {
	if r.secret != nil {
		return r.secret
	}
	return r.credentials
}

// testKeyMaterial is the key of testKeyring.
func testKeyMaterial() []byte {
	key := sha256.Sum256([]byte("hubctl service test key"))
	return key[:]
}
