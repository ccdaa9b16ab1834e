package sinkopen

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/store/catalog"
)

// recordingType opens sinks that remember what they were opened with, or
// refuses to open when refuse is set.
type recordingType struct {
	refuse  bool
	cfg     sink.Config
	secrets []string
}

func (t *recordingType) Name() string                               { return "rec" }
func (t *recordingType) Parse(json.RawMessage) (sink.Config, error) { return sink.Config{}, nil }
func (t *recordingType) Open(cfg sink.Config, secrets []string) (sink.Sink, error) {
	if t.refuse {
		return nil, errors.New("destination refused")
	}
	t.cfg, t.secrets = cfg, secrets
	return nopSink{}, nil
}

type nopSink struct{}

func (nopSink) Deliver(context.Context, sink.Delivery) sink.Outcome { return sink.Outcome{OK: true} }
func (nopSink) Probe(context.Context, sink.ProbeRequest) error      { return nil }
func (nopSink) Close() error                                        { return nil }

func keyring(t *testing.T) *crypto.Keyring {
	t.Helper()
	key := sha256.Sum256([]byte("sinkopen test key"))
	keys, err := crypto.ParseKeyring(base64.StdEncoding.EncodeToString(key[:]))
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func seal(t *testing.T, keys *crypto.Keyring, plain string, id uuid.UUID, column string) string {
	t.Helper()
	sealed, err := keys.Encrypt([]byte(plain), id.String(), column)
	if err != nil {
		t.Fatal(err)
	}
	return sealed
}

func TestOpenDecryptsCredentialsAndLiveSecrets(t *testing.T) {
	keys := keyring(t)
	typ := &recordingType{}
	reg, err := sink.NewRegistry(typ)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := now
	o := New(keys, reg, func() time.Time { return clock })
	id := uuid.New()
	expires := now.Add(time.Minute)
	sub := catalog.Subscription{
		ID: id, SinkType: "rec", SinkConfig: json.RawMessage(`{"url":"u"}`), Destination: "u",
		SinkCredentials:         seal(t, keys, `{"token":"t"}`, id, catalog.ColumnSinkCredentials),
		SigningSecret:           seal(t, keys, "new-secret", id, catalog.ColumnSigningSecret),
		PreviousSecret:          seal(t, keys, "old-secret", id, catalog.ColumnPreviousSecret),
		PreviousSecretExpiresAt: &expires,
	}
	if _, err := o.Open(sub); err != nil {
		t.Fatal(err)
	}
	if string(typ.cfg.Credentials) != `{"token":"t"}` || len(typ.secrets) != 2 || typ.secrets[0] != "new-secret" || typ.secrets[1] != "old-secret" {
		t.Errorf("opened with credentials %s and secrets %v", typ.cfg.Credentials, typ.secrets)
	}
	clock = expires
	if _, err := o.Open(sub); err != nil || len(typ.secrets) != 1 {
		t.Errorf("after the overlap: secrets %v, err %v; want the current one only", typ.secrets, err)
	}

	// A credential sealed for another column is the hub's fault, not a refusal.
	broken := sub
	broken.SinkCredentials = seal(t, keys, `{"token":"t"}`, id, catalog.ColumnSigningSecret)
	if _, err := o.Open(broken); err == nil || IsRefused(err) {
		t.Errorf("undecryptable credentials: err %v, want a hub error", err)
	}
	unknown := sub
	unknown.SinkType = "nobody"
	if _, err := o.Open(unknown); err == nil || IsRefused(err) {
		t.Errorf("unknown type: err %v, want a hub error", err)
	}
	typ.refuse = true
	if _, err := o.Open(sub); !IsRefused(err) || err.Error() != "destination refused" {
		t.Errorf("refused open: err %v, want the type's refusal as it said it", err)
	}
}

// TestOpenPassesTheSchemes: the sink is told how the current secret signs,
// and how the previous one does only while it still signs.
func TestOpenPassesTheSchemes(t *testing.T) {
	keys := keyring(t)
	typ := &recordingType{}
	reg, err := sink.NewRegistry(typ)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := now
	o := New(keys, reg, func() time.Time { return clock })
	id := uuid.New()
	expires := now.Add(time.Minute)
	sub := catalog.Subscription{
		ID: id, SinkType: "rec", SinkConfig: json.RawMessage(`{"url":"u"}`), Destination: "u",
		SigningSecret:           seal(t, keys, "new-secret", id, catalog.ColumnSigningSecret),
		PreviousSecret:          seal(t, keys, "old-secret", id, catalog.ColumnPreviousSecret),
		PreviousSecretExpiresAt: &expires,
		SignatureScheme:         "standard-webhooks",
		PreviousSignatureScheme: "lerian",
	}
	if _, err := o.Open(sub); err != nil {
		t.Fatal(err)
	}
	if typ.cfg.SignatureScheme != "standard-webhooks" || typ.cfg.PreviousSignatureScheme != "lerian" {
		t.Errorf("during the overlap: schemes %q/%q", typ.cfg.SignatureScheme, typ.cfg.PreviousSignatureScheme)
	}
	clock = expires
	if _, err := o.Open(sub); err != nil || typ.cfg.PreviousSignatureScheme != "" || typ.cfg.SignatureScheme != "standard-webhooks" {
		t.Errorf("after the overlap: schemes %q/%q, %v", typ.cfg.SignatureScheme, typ.cfg.PreviousSignatureScheme, err)
	}
}
