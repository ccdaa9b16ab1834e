package service_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/pull"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/oncall"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// testSinkType is a sink type for these tests only: its object is
// {"type", "url"} plus, when it has credentials, a secret "token". A probe
// fails for the URLs the test marks as failing, so one subscription can fail
// and then pass verification.
type testSinkType struct {
	name        string
	credentials bool

	mu      sync.Mutex
	failing map[string]bool
	probes  int
	secrets [][]string // signing secrets of each Open, in order
}

func (t *testSinkType) Name() string { return t.name }

func (t *testSinkType) Parse(raw json.RawMessage) (sink.Config, error) {
	var obj struct {
		URL   string `json:"url"`
		Token string `json:"token"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return sink.Config{}, &sink.FieldError{Field: "sink", Message: "not an object"}
	}
	if obj.URL == "" {
		return sink.Config{}, &sink.FieldError{Field: "sink.url", Message: "required"}
	}
	public, _ := json.Marshal(map[string]string{"url": obj.URL})
	cfg := sink.Config{Public: public, Destination: obj.URL}
	if t.credentials {
		if obj.Token == "" {
			return sink.Config{}, &sink.FieldError{Field: "sink.token", Message: "required"}
		}
		cfg.Credentials, _ = json.Marshal(map[string]string{"token": obj.Token})
	}
	return cfg, nil
}

func (t *testSinkType) Open(cfg sink.Config, signingSecrets []string) (sink.Sink, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.secrets = append(t.secrets, signingSecrets)
	return &testSink{typ: t, url: cfg.Destination}, nil
}

func (t *testSinkType) setFailing(url string, failing bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failing == nil {
		t.failing = map[string]bool{}
	}
	t.failing[url] = failing
}

func (t *testSinkType) probeCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.probes
}

type testSink struct {
	typ *testSinkType
	url string
}

func (s *testSink) Deliver(context.Context, sink.Delivery) sink.Outcome {
	return sink.Outcome{OK: true}
}
func (s *testSink) Close() error { return nil }

func (s *testSink) Probe(_ context.Context, p sink.ProbeRequest) error {
	s.typ.mu.Lock()
	defer s.typ.mu.Unlock()
	s.typ.probes++
	if s.typ.failing[s.url] {
		return errors.New("connection refused by " + s.url)
	}
	return nil
}

type subsFixture struct {
	st      *storetest.Store
	keys    *crypto.Keyring
	clk     *clock
	webhook *testSinkType
	queue   *testSinkType // has credentials
	svc     *service.Subscriptions
}

const rotationOverlap = 24 * time.Hour

func testKeyring(t *testing.T) *crypto.Keyring {
	t.Helper()
	keys, err := crypto.ParseKeyring(base64.StdEncoding.EncodeToString(testKeyMaterial()))
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// newSubsFixture serves tenants acme and globex; without a store it builds
// the service with no database, for checks that must not need one.
func newSubsFixture(t *testing.T, withStore bool) *subsFixture {
	t.Helper()
	f := &subsFixture{
		keys:    testKeyring(t),
		clk:     newClock(),
		webhook: &testSinkType{name: "webhook"},
		queue:   &testSinkType{name: "sqs", credentials: true},
	}
	registry, err := sink.NewRegistry(f.webhook, f.queue, pull.NewType())
	if err != nil {
		t.Fatal(err)
	}
	var (
		cat      *catalog.Store
		jobs     *queue.Store
		breakers *oncall.Store
	)
	if withStore {
		f.st = openStore(t)
		tenants := service.NewTenants(f.st.Catalog, f.st.Lifecycle, f.clk.Now)
		for _, id := range []string{"acme", "globex"} {
			if _, err := tenants.Create(context.Background(), id); err != nil {
				t.Fatal(err)
			}
		}
		cat, jobs, breakers = f.st.Catalog, f.st.Queue, f.st.OnCall
	}
	f.svc = service.NewSubscriptions(cat, jobs, breakers, f.keys, registry, service.SubscriptionOptions{Now: f.clk.Now, RotationOverlap: rotationOverlap})
	return f
}

func webhookInput(url string) hubapi.SubscriptionCreate {
	return hubapi.SubscriptionCreate{
		Name:       "orders",
		Sink:       json.RawMessage(`{"type": "webhook", "url": "` + url + `"}`),
		EventTypes: []string{"transaction.*"},
	}
}

func (f *subsFixture) create(t *testing.T, tenantID string, in hubapi.SubscriptionCreate) (hubapi.Subscription, string) {
	t.Helper()
	sub, secret, err := f.svc.Create(context.Background(), tenantID, in)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return sub, secret
}

// rawRow reads columns the views never show.
type rawRow struct {
	credentials, secret, previous                      *string
	enabled                                            bool
	state                                              string
	verificationError, disabledReason                  *string
	failingSince, lastFailureAt, verifiedAt, updatedAt *time.Time
}

func (f *subsFixture) raw(t *testing.T, id string) rawRow {
	t.Helper()
	var r rawRow
	err := f.st.Pool.QueryRow(context.Background(), `
		SELECT sink_credentials, signing_secret, previous_secret, enabled, verification_state,
		       verification_error, disabled_reason, failing_since, last_failure_at, verified_at, updated_at
		FROM subscriptions WHERE id = $1`, id).
		Scan(&r.credentials, &r.secret, &r.previous, &r.enabled, &r.state,
			&r.verificationError, &r.disabledReason, &r.failingSince, &r.lastFailureAt, &r.verifiedAt, &r.updatedAt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// autoDisable puts a subscription in the state dispatch leaves it in after
// auto-disable (docs/concepts.md, Auto-disable), with a verification state of choice.
func (f *subsFixture) autoDisable(t *testing.T, id, verificationState string) {
	t.Helper()
	_, err := f.st.Pool.Exec(context.Background(), `
		UPDATE subscriptions
		SET enabled = false, disabled_reason = 'auto_disabled', verification_state = $2,
		    failing_since = $3, last_failure_at = $4
		WHERE id = $1`, id, verificationState, f.clk.now.Add(-200*time.Hour), f.clk.now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
}

func TestCreateSubscriptionAppliesDefaultsAndVerifies(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()

	sub, secret := f.create(t, "acme", webhookInput("https://hooks.test/a"))
	if !strings.HasPrefix(secret, crypto.SigningSecretPrefix) {
		t.Errorf("generated secret %q lacks the %s prefix", secret, crypto.SigningSecretPrefix)
	}
	id, err := uuid.Parse(sub.ID)
	if err != nil || id.Version() != 7 {
		t.Errorf("id %q is not a UUIDv7", sub.ID)
	}
	want := hubapi.Subscription{
		ID: sub.ID, TenantID: "acme", Name: "orders",
		Sink:       map[string]any{"type": "webhook", "url": "https://hooks.test/a"},
		EventTypes: []string{"transaction.*"}, SchemaMajor: 1, Ordering: "none", AttemptTimeout: "10s", Enabled: true,
		SigningSecret: hubapi.Masked, SignatureScheme: "lerian",
		// Verification is a second change at the same instant of the
		// frozen clock; the version still moves on (store.nextVersion).
		VerificationState: "active", CreatedAt: f.clk.now, UpdatedAt: f.clk.now.Add(time.Microsecond),
	}
	assertView(t, "webhook", sub, want)

	// A failing destination is still created, and says why it failed.
	f.webhook.setFailing("https://hooks.test/down", true)
	failed, _ := f.create(t, "acme", webhookInput("https://hooks.test/down"))
	if failed.VerificationState != "failed" || failed.VerificationError != "connection refused by https://hooks.test/down" {
		t.Errorf("failed verification shows state %q error %q", failed.VerificationState, failed.VerificationError)
	}

	// Pull: no secret, a cursor, every optional field set.
	major, origin, disabled := 2, "midaz", false
	pullSub, pullSecret := f.create(t, "acme", hubapi.SubscriptionCreate{
		Name: "pull", Sink: json.RawMessage(`{"type": "pull"}`),
		EventTypes: []string{"account.created", "*", "account.created"}, SchemaMajor: &major, Origin: &origin,
		RetrySchedule: []string{"0s", "1m", "10h"}, AttemptTimeout: "1500ms", Enabled: &disabled,
	})
	if pullSecret != "" {
		t.Errorf("pull subscription got a signing secret")
	}
	assertView(t, "pull", pullSub, hubapi.Subscription{
		ID: pullSub.ID, TenantID: "acme", Name: "pull", Sink: map[string]any{"type": "pull"},
		EventTypes: []string{"account.created", "*"}, SchemaMajor: 2, Origin: &origin, Ordering: "none",
		RetrySchedule: []string{"0s", "1m", "10h"}, AttemptTimeout: "1.5s", Enabled: false,
		VerificationState: "active", CreatedAt: f.clk.now, UpdatedAt: f.clk.now.Add(time.Microsecond),
	})
	var cursors int
	if err := f.st.Pool.QueryRow(ctx, `SELECT count(*) FROM pull_cursors WHERE subscription_id = $1`, pullSub.ID).Scan(&cursors); err != nil || cursors != 1 {
		t.Errorf("pull cursors = %d (%v), want 1", cursors, err)
	}
}

func assertView(t *testing.T, name string, got, want hubapi.Subscription) {
	t.Helper()
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("%s:\n got %s\nwant %s", name, gotJSON, wantJSON)
	}
}

func TestSubscriptionViewJSONHasTheSpecFields(t *testing.T) {
	f := newSubsFixture(t, true)
	sub, _ := f.create(t, "acme", webhookInput("https://hooks.test/a"))
	raw, err := json.Marshal(sub)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"attempt_timeout", "created_at", "disabled_reason", "enabled", "event_types", "failing_since",
		"filter", "id", "last_failure_at", "name", "ordering", "origin", "previous_secret_expires_at", "rate_limit", "retry_schedule", "schema_major",
		"signature_scheme", "signing_secret", "sink", "tenant_id", "updated_at", "verification_state"}
	if !slices.Equal(keys, want) {
		t.Errorf("view fields %q, want %q", keys, want)
	}
	if string(fields["signing_secret"]) != `"****"` {
		t.Errorf("signing_secret = %s, want the mask", fields["signing_secret"])
	}
	for _, null := range []string{"origin", "filter", "rate_limit", "retry_schedule", "disabled_reason", "failing_since", "last_failure_at", "previous_secret_expires_at"} {
		if string(fields[null]) != "null" {
			t.Errorf("%s = %s, want null", null, fields[null])
		}
	}
}

func TestCreateValidation(t *testing.T) {
	intPtr := func(i int) *int { return &i }
	strPtr := func(s string) *string { return &s }
	manySteps := make([]string, 13)
	for i := range manySteps {
		manySteps[i] = "1s"
	}
	cases := []struct {
		name      string
		edit      func(*hubapi.SubscriptionCreate)
		wantCode  string
		wantField string
	}{
		{"name too long", func(in *hubapi.SubscriptionCreate) { in.Name = strings.Repeat("é", 201) }, "invalid_request", "name"},
		{"name not UTF-8", func(in *hubapi.SubscriptionCreate) { in.Name = "\xff" }, "invalid_request", "name"},
		{"name with NUL", func(in *hubapi.SubscriptionCreate) { in.Name = "a\x00b" }, "invalid_request", "name"},
		{"no sink", func(in *hubapi.SubscriptionCreate) { in.Sink = nil }, "invalid_sink", "sink"},
		{"sink not an object", func(in *hubapi.SubscriptionCreate) { in.Sink = json.RawMessage(`["webhook"]`) }, "invalid_sink", "sink"},
		{"sink null", func(in *hubapi.SubscriptionCreate) { in.Sink = json.RawMessage(`null`) }, "invalid_sink", "sink"},
		{"sink without type", func(in *hubapi.SubscriptionCreate) { in.Sink = json.RawMessage(`{"url": "https://x.test"}`) }, "invalid_sink", "sink.type"},
		{"sink type not a string", func(in *hubapi.SubscriptionCreate) { in.Sink = json.RawMessage(`{"type": 7}`) }, "invalid_sink", "sink.type"},
		{"unknown sink type", func(in *hubapi.SubscriptionCreate) { in.Sink = json.RawMessage(`{"type": "carrier-pigeon"}`) }, "invalid_sink", "sink.type"},
		{"sink config rejected", func(in *hubapi.SubscriptionCreate) { in.Sink = json.RawMessage(`{"type": "webhook"}`) }, "invalid_sink", "sink.url"},
		{"sink credentials missing", func(in *hubapi.SubscriptionCreate) { in.Sink = json.RawMessage(`{"type": "sqs", "url": "q"}`) }, "invalid_sink", "sink.token"},
		{"sink value with NUL", func(in *hubapi.SubscriptionCreate) {
			in.Sink = json.RawMessage(`{"type": "webhook", "url": "a\u0000b"}`)
		}, "invalid_sink", "sink"},
		{"no event types", func(in *hubapi.SubscriptionCreate) { in.EventTypes = nil }, "invalid_request", "event_types"},
		{"empty event types", func(in *hubapi.SubscriptionCreate) { in.EventTypes = []string{} }, "invalid_request", "event_types"},
		{"bad event type", func(in *hubapi.SubscriptionCreate) { in.EventTypes = []string{"transaction.*", "Transaction"} }, "invalid_request", "event_types"},
		{"schema major 0", func(in *hubapi.SubscriptionCreate) { in.SchemaMajor = intPtr(0) }, "invalid_request", "schema_major"},
		{"schema major beyond integer", func(in *hubapi.SubscriptionCreate) { in.SchemaMajor = intPtr(1 << 31) }, "invalid_request", "schema_major"},
		{"empty origin", func(in *hubapi.SubscriptionCreate) { in.Origin = strPtr("") }, "invalid_request", "origin"},
		{"empty retry schedule", func(in *hubapi.SubscriptionCreate) { in.RetrySchedule = []string{} }, "invalid_retry_schedule", "retry_schedule"},
		{"13 retry steps", func(in *hubapi.SubscriptionCreate) { in.RetrySchedule = manySteps }, "invalid_retry_schedule", "retry_schedule"},
		{"negative retry step", func(in *hubapi.SubscriptionCreate) { in.RetrySchedule = []string{"1s", "-1s"} }, "invalid_retry_schedule", "retry_schedule"},
		{"retry step over 10h", func(in *hubapi.SubscriptionCreate) { in.RetrySchedule = []string{"10h0m1s"} }, "invalid_retry_schedule", "retry_schedule"},
		{"retry step not a duration", func(in *hubapi.SubscriptionCreate) { in.RetrySchedule = []string{"soon"} }, "invalid_retry_schedule", "retry_schedule"},
		{"timeout under 1s", func(in *hubapi.SubscriptionCreate) { in.AttemptTimeout = "999ms" }, "invalid_request", "attempt_timeout"},
		{"timeout over 60s", func(in *hubapi.SubscriptionCreate) { in.AttemptTimeout = "1m0.001s" }, "invalid_request", "attempt_timeout"},
		{"timeout finer than ms", func(in *hubapi.SubscriptionCreate) { in.AttemptTimeout = "1500100us" }, "invalid_request", "attempt_timeout"},
		{"timeout not a duration", func(in *hubapi.SubscriptionCreate) { in.AttemptTimeout = "10" }, "invalid_request", "attempt_timeout"},
		{"short signing secret", func(in *hubapi.SubscriptionCreate) { in.SigningSecret = strings.Repeat("s", 23) }, "invalid_request", "signing_secret"},
		{"signing secret on a queue", func(in *hubapi.SubscriptionCreate) {
			in.Sink = json.RawMessage(`{"type": "sqs", "url": "q", "token": "t"}`)
			in.SigningSecret = strings.Repeat("s", 24)
		}, "invalid_request", "signing_secret"},
	}
	// No database: every one of these is turned away before any I/O.
	f := newSubsFixture(t, false)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := webhookInput("https://hooks.test/a")
			tc.edit(&in)
			_, secret, err := f.svc.Create(context.Background(), "acme", in)
			code, field := codeOf(err)
			if code != tc.wantCode || field != tc.wantField {
				t.Errorf("err = %v (code %q field %q), want code %q field %q", err, code, field, tc.wantCode, tc.wantField)
			}
			if secret != "" {
				t.Errorf("a rejected create returned a secret")
			}
		})
	}
}

func TestCreateEdgeValuesAccepted(t *testing.T) {
	f := newSubsFixture(t, true)
	in := webhookInput("https://hooks.test/a")
	in.Name = strings.Repeat("é", 200)
	in.RetrySchedule = []string{"0s", "10h", "1s", "1s", "1s", "1s", "1s", "1s", "1s", "1s", "1s", "1s"}
	in.AttemptTimeout = "60s"
	in.SigningSecret = strings.Repeat("s", 24)
	sub, secret := f.create(t, "acme", in)
	if secret != in.SigningSecret || sub.AttemptTimeout != "1m0s" || len(sub.RetrySchedule) != 12 {
		t.Errorf("edge values: secret %q, timeout %q, %d steps", secret, sub.AttemptTimeout, len(sub.RetrySchedule))
	}
	in.AttemptTimeout = "1s"
	if sub, _ = f.create(t, "acme", in); sub.AttemptTimeout != "1s" {
		t.Errorf("timeout 1s shows as %q", sub.AttemptTimeout)
	}
}

func TestCreateForUnknownTenant(t *testing.T) {
	f := newSubsFixture(t, true)
	for _, tenant := range []string{"nobody", "not a tenant id"} {
		_, _, err := f.svc.Create(context.Background(), tenant, webhookInput("https://hooks.test/a"))
		if code, _ := codeOf(err); code != hubapi.CodeTenantNotFound {
			t.Errorf("tenant %q: err = %v, want tenant_not_found", tenant, err)
		}
	}
	if f.webhook.probeCount() != 0 {
		t.Errorf("%d probes sent for tenants that do not exist", f.webhook.probeCount())
	}
}

func TestCrossTenantAccessAnswersNotFound(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()
	sub, _ := f.create(t, "acme", webhookInput("https://hooks.test/a"))
	name := "stolen"

	calls := map[string]func(tenant, id string) error{
		"get": func(tenant, id string) error { _, err := f.svc.Get(ctx, tenant, id); return err },
		"update": func(tenant, id string) error {
			_, err := f.svc.Update(ctx, tenant, id, hubapi.SubscriptionUpdate{Name: &name})
			return err
		},
		"delete":  func(tenant, id string) error { _, err := f.svc.Delete(ctx, tenant, id); return err },
		"enable":  func(tenant, id string) error { _, err := f.svc.Enable(ctx, tenant, id); return err },
		"disable": func(tenant, id string) error { _, err := f.svc.Disable(ctx, tenant, id); return err },
		"verify":  func(tenant, id string) error { _, err := f.svc.Verify(ctx, tenant, id); return err },
		"rotate":  func(tenant, id string) error { _, err := f.svc.RotateSecret(ctx, tenant, id, ""); return err },
	}
	targets := []struct{ name, tenant, id string }{
		{"another tenant's subscription", "globex", sub.ID},
		{"a missing subscription", "acme", uuid.Must(uuid.NewV7()).String()},
		{"a malformed id", "acme", "not-a-uuid"},
		{"an impossible tenant", "bad tenant\x00", sub.ID},
	}
	for verb, call := range calls {
		var messages []string
		for _, target := range targets {
			err := call(target.tenant, target.id)
			var nf *hubapi.NotFoundError
			if !errors.As(err, &nf) || nf.Code != service.CodeSubscriptionNotFound || !errors.Is(err, pg.ErrNotFound) {
				t.Errorf("%s on %s: err = %v, want NotFoundError subscription_not_found", verb, target.name, err)
				continue
			}
			messages = append(messages, strings.ReplaceAll(err.Error(), target.id, "<id>"))
		}
		if len(messages) == len(targets) && messages[0] != messages[1] {
			t.Errorf("%s: another tenant's answer %q differs from a missing one's %q", verb, messages[0], messages[1])
		}
	}
	got, err := f.svc.Get(ctx, "acme", sub.ID)
	if err != nil || got.Name != "orders" || !got.Enabled {
		t.Errorf("owner's subscription after foreign calls: %+v, %v", got, err)
	}
	if page, err := f.svc.List(ctx, "globex", hubapi.ListParams{}); err != nil || len(page.Items) != 0 {
		t.Errorf("another tenant's list: %+v, %v", page, err)
	}
}

func TestSecretsNeverAppearInViews(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()
	const signingSecret = "caller-chosen-signing-secret-0001"
	const token = "queue-credential-token-0002"
	in := webhookInput("https://hooks.test/a")
	in.SigningSecret = signingSecret
	hook, _ := f.create(t, "acme", in)
	queue, _ := f.create(t, "acme", hubapi.SubscriptionCreate{
		Sink: json.RawMessage(`{"type": "sqs", "url": "https://queue.test/q", "token": "` + token + `"}`), EventTypes: []string{"*"},
	})
	if queue.Sink["token"] != hubapi.Masked || queue.Sink["url"] != "https://queue.test/q" {
		t.Errorf("queue sink shows %v, want the url and a masked token", queue.Sink)
	}
	rotation, err := f.svc.RotateSecret(ctx, "acme", hook.ID, "")
	if err != nil {
		t.Fatal(err)
	}

	var views []any
	add := func(v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		views = append(views, v)
	}
	views = append(views, hook, queue)
	add(f.svc.Get(ctx, "acme", hook.ID))
	add(f.svc.Get(ctx, "acme", queue.ID))
	add(f.svc.List(ctx, "acme", hubapi.ListParams{}))
	renamed := "renamed"
	add(f.svc.Update(ctx, "acme", queue.ID, hubapi.SubscriptionUpdate{Name: &renamed}))
	add(f.svc.Enable(ctx, "acme", hook.ID))
	add(f.svc.Verify(ctx, "acme", hook.ID))
	add(f.svc.Verify(ctx, "acme", queue.ID))
	for i, v := range views {
		raw, _ := json.Marshal(v)
		for _, secret := range []string{signingSecret, token, rotation.SigningSecret} {
			if strings.Contains(string(raw), secret) {
				t.Errorf("view %d shows a secret: %s", i, raw)
			}
		}
	}
}

func TestSecretsAreStoredEncryptedAndBoundToTheirColumn(t *testing.T) {
	f := newSubsFixture(t, true)
	const signingSecret = "caller-chosen-signing-secret-0001"
	const token = "queue-credential-token-0002"
	in := webhookInput("https://hooks.test/a")
	in.SigningSecret = signingSecret
	hook, _ := f.create(t, "acme", in)
	queue, _ := f.create(t, "acme", hubapi.SubscriptionCreate{
		Sink: json.RawMessage(`{"type": "sqs", "url": "https://queue.test/q", "token": "` + token + `"}`), EventTypes: []string{"*"},
	})
	if _, err := f.svc.RotateSecret(context.Background(), "acme", hook.ID, "the-next-signing-secret-0003"); err != nil {
		t.Fatal(err)
	}

	hookRow, queueRow := f.raw(t, hook.ID), f.raw(t, queue.ID)
	cases := []struct {
		name     string
		envelope *string
		rowID    string
		column   string
		want     string
	}{
		{"signing secret", hookRow.secret, hook.ID, catalog.ColumnSigningSecret, "the-next-signing-secret-0003"},
		{"previous secret", hookRow.previous, hook.ID, catalog.ColumnPreviousSecret, signingSecret},
		{"credentials", queueRow.credentials, queue.ID, catalog.ColumnSinkCredentials, `{"token":"` + token + `"}`},
	}
	for _, tc := range cases {
		if tc.envelope == nil {
			t.Errorf("%s: column is NULL", tc.name)
			continue
		}
		if strings.Contains(*tc.envelope, tc.want) || strings.Contains(*tc.envelope, token) {
			t.Errorf("%s stored in the clear: %q", tc.name, *tc.envelope)
		}
		plain, err := f.keys.Decrypt(*tc.envelope, tc.rowID, tc.column)
		if err != nil || string(plain) != tc.want {
			t.Errorf("%s decrypts to %q, %v; want %q", tc.name, plain, err, tc.want)
		}
		if _, err := f.keys.Decrypt(*tc.envelope, queue.ID+hook.ID, tc.column); !errors.Is(err, crypto.ErrAuthentication) {
			t.Errorf("%s opened for another row: err = %v", tc.name, err)
		}
		if _, err := f.keys.Decrypt(*tc.envelope, tc.rowID, "name"); !errors.Is(err, crypto.ErrAuthentication) {
			t.Errorf("%s opened for another column: err = %v", tc.name, err)
		}
	}
}

func TestRotationOverlap(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()
	sub, first := f.create(t, "acme", webhookInput("https://hooks.test/a"))
	secretsNow := func() []string {
		t.Helper()
		row, err := f.st.GetSubscription(ctx, "acme", uuid.MustParse(sub.ID))
		if err != nil {
			t.Fatal(err)
		}
		secrets, err := f.svc.Sinks().SigningSecrets(row)
		if err != nil {
			t.Fatal(err)
		}
		return secrets
	}
	if got := secretsNow(); !slices.Equal(got, []string{first}) {
		t.Fatalf("before rotation: %q, want only the first secret", got)
	}

	f.clk.now = f.clk.now.Add(time.Hour)
	second, err := f.svc.RotateSecret(ctx, "acme", sub.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	wantExpiry := f.clk.now.Add(rotationOverlap)
	if second.SigningSecret == first || !strings.HasPrefix(second.SigningSecret, crypto.SigningSecretPrefix) ||
		second.PreviousSecretExpiresAt == nil || !second.PreviousSecretExpiresAt.Equal(wantExpiry) {
		t.Errorf("first rotation returned %+v, want a new secret expiring the old at %v", second, wantExpiry)
	}
	if got := secretsNow(); !slices.Equal(got, []string{second.SigningSecret, first}) {
		t.Errorf("during the overlap: %q, want new then old", got)
	}
	if view, _ := f.svc.Get(ctx, "acme", sub.ID); view.PreviousSecretExpiresAt == nil || !view.PreviousSecretExpiresAt.Equal(wantExpiry) {
		t.Errorf("view shows previous_secret_expires_at %v, want %v", view.PreviousSecretExpiresAt, wantExpiry)
	}

	// Inside the overlap: the oldest secret goes, the overlap restarts.
	f.clk.now = f.clk.now.Add(time.Hour)
	const third = "a-caller-supplied-secret-of-enough-length"
	rotated, err := f.svc.RotateSecret(ctx, "acme", sub.ID, third)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.SigningSecret != third || !rotated.PreviousSecretExpiresAt.Equal(f.clk.now.Add(rotationOverlap)) {
		t.Errorf("second rotation returned %+v", rotated)
	}
	if got := secretsNow(); !slices.Equal(got, []string{third, second.SigningSecret}) {
		t.Errorf("after a second rotation: %q, want the two newest", got)
	}

	// The probe of a webhook signs with the same secrets, newest first.
	if _, err := f.svc.Verify(ctx, "acme", sub.ID); err != nil {
		t.Fatal(err)
	}
	if opened := f.webhook.secrets[len(f.webhook.secrets)-1]; !slices.Equal(opened, []string{third, second.SigningSecret}) {
		t.Errorf("sink opened with %q", opened)
	}

	f.clk.now = *rotated.PreviousSecretExpiresAt
	if got := secretsNow(); !slices.Equal(got, []string{third}) {
		t.Errorf("at the end of the overlap: %q, want only the newest", got)
	}
	if view, _ := f.svc.Get(ctx, "acme", sub.ID); view.PreviousSecretExpiresAt != nil {
		t.Errorf("view still shows an overlap ending %v", view.PreviousSecretExpiresAt)
	}
}

func TestRotationWithoutOverlapKeepsOneSecret(t *testing.T) {
	f := newSubsFixture(t, true)
	registry, _ := sink.NewRegistry(f.webhook)
	svc := service.NewSubscriptions(f.st.Catalog, f.st.Queue, f.st.OnCall, f.keys, registry, service.SubscriptionOptions{Now: f.clk.Now})
	sub, _, err := svc.Create(context.Background(), "acme", webhookInput("https://hooks.test/a"))
	if err != nil {
		t.Fatal(err)
	}
	rotation, err := svc.RotateSecret(context.Background(), "acme", sub.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	row, _ := f.st.GetSubscription(context.Background(), "acme", uuid.MustParse(sub.ID))
	secrets, err := svc.Sinks().SigningSecrets(row)
	if err != nil || !slices.Equal(secrets, []string{rotation.SigningSecret}) || rotation.PreviousSecretExpiresAt != nil {
		t.Errorf("zero overlap: secrets %q (%v), expiry %v", secrets, err, rotation.PreviousSecretExpiresAt)
	}
}

func TestRotateSecretRejections(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()
	hook, _ := f.create(t, "acme", webhookInput("https://hooks.test/a"))
	pullSub, _ := f.create(t, "acme", hubapi.SubscriptionCreate{Sink: json.RawMessage(`{"type": "pull"}`), EventTypes: []string{"*"}})

	_, err := f.svc.RotateSecret(ctx, "acme", pullSub.ID, "")
	var conflict *hubapi.ConflictError
	if !errors.As(err, &conflict) || conflict.Code != service.CodeNotAWebhookSubscription {
		t.Errorf("rotate a pull subscription: err = %v, want ConflictError not_a_webhook_subscription", err)
	}
	if code, field := codeOf(mustErr(f.svc.RotateSecret(ctx, "acme", hook.ID, "too-short"))); code != "invalid_request" || field != "signing_secret" {
		t.Errorf("short secret: code %q field %q", code, field)
	}
	if row := f.raw(t, hook.ID); row.previous != nil {
		t.Errorf("a rejected rotation rotated")
	}
}

func mustErr[T any](_ T, err error) error { return err }

func TestDeleteCancelsPendingJobs(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()
	sub, _ := f.create(t, "acme", webhookInput("https://hooks.test/a"))
	for seq, state := range map[int64]string{1: "pending", 2: "pending", 3: "succeeded", 4: "dead"} {
		_, err := f.st.Pool.Exec(ctx, `
			INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, dead_reason)
			VALUES ($1, 'acme', $2, $3, $4, CASE WHEN $4 = 'dead' THEN 'exhausted' END)`,
			uuid.Must(uuid.NewV7()), sub.ID, seq, state)
		if err != nil {
			t.Fatal(err)
		}
	}

	canceled, err := f.svc.Delete(ctx, "acme", sub.ID)
	if err != nil || canceled != 2 {
		t.Fatalf("delete: canceled %d, %v; want 2", canceled, err)
	}
	rows, err := f.st.Pool.Query(ctx, `SELECT state FROM delivery_jobs WHERE subscription_id = $1 ORDER BY event_seq`, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		states = append(states, s)
	}
	if want := []string{"canceled", "canceled", "succeeded", "dead"}; !slices.Equal(states, want) {
		t.Errorf("job states %q, want %q", states, want)
	}
	if _, err := f.svc.Get(ctx, "acme", sub.ID); !errors.Is(err, pg.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
	if page, _ := f.svc.List(ctx, "acme", hubapi.ListParams{}); len(page.Items) != 0 {
		t.Errorf("deleted subscription still listed")
	}
}

func TestVerifySuccessRecoversAnAutoDisabledSubscription(t *testing.T) {
	f := newSubsFixture(t, true)
	sub, _ := f.create(t, "acme", webhookInput("https://hooks.test/a"))
	f.autoDisable(t, sub.ID, "failed")
	f.clk.now = f.clk.now.Add(time.Hour)

	got, err := f.svc.Verify(context.Background(), "acme", sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.VerificationState != "active" || !got.Enabled || got.DisabledReason != nil || got.FailingSince != nil ||
		got.LastFailureAt != nil || got.VerificationError != "" || !got.UpdatedAt.Equal(f.clk.now) {
		t.Errorf("after a successful verify: %+v", got)
	}
	if row := f.raw(t, sub.ID); row.verifiedAt == nil || !row.verifiedAt.Equal(f.clk.now) {
		t.Errorf("verified_at %v, want %v", row.verifiedAt, f.clk.now)
	}
}

func TestVerifyFailureChangesOnlyTheState(t *testing.T) {
	f := newSubsFixture(t, true)
	sub, _ := f.create(t, "acme", webhookInput("https://hooks.test/a"))
	f.autoDisable(t, sub.ID, "active")
	before := f.raw(t, sub.ID)
	f.webhook.setFailing("https://hooks.test/a", true)

	_, err := f.svc.Verify(context.Background(), "acme", sub.ID)
	var failed *hubapi.UnprocessableError
	if !errors.As(err, &failed) || failed.Code != service.CodeVerificationFailed ||
		!strings.Contains(failed.Message, "connection refused by https://hooks.test/a") {
		t.Fatalf("err = %v, want verification_failed with the probe's message", err)
	}
	after := f.raw(t, sub.ID)
	if after.state != "failed" || after.verificationError == nil || *after.verificationError != "connection refused by https://hooks.test/a" {
		t.Errorf("state %q error %v after a failed verify", after.state, after.verificationError)
	}
	before.state, before.verificationError, before.updatedAt = after.state, after.verificationError, after.updatedAt
	if !sameRaw(before, after) {
		t.Errorf("a failed verify changed more than the state:\nbefore %+v\nafter  %+v", before, after)
	}
	if view, _ := f.svc.Get(context.Background(), "acme", sub.ID); view.VerificationError == "" {
		t.Errorf("view of a failed subscription lacks verification_error")
	}
}

func sameRaw(a, b rawRow) bool {
	ja, _ := json.Marshal([]any{a.credentials, a.secret, a.previous, a.enabled, a.state, a.verificationError,
		a.disabledReason, a.failingSince, a.lastFailureAt, a.verifiedAt, a.updatedAt})
	jb, _ := json.Marshal([]any{b.credentials, b.secret, b.previous, b.enabled, b.state, b.verificationError,
		b.disabledReason, b.failingSince, b.lastFailureAt, b.verifiedAt, b.updatedAt})
	return string(ja) == string(jb)
}

func TestEnableAndDisable(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()
	sub, _ := f.create(t, "acme", webhookInput("https://hooks.test/a"))
	f.autoDisable(t, sub.ID, "active")

	enabled, err := f.svc.Enable(ctx, "acme", sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !enabled.Enabled || enabled.DisabledReason != nil || enabled.FailingSince == nil || enabled.LastFailureAt == nil {
		t.Errorf("enable: %+v; want enabled, no reason, failure span kept", enabled)
	}
	disabled, err := f.svc.Disable(ctx, "acme", sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	if disabled.Enabled || disabled.DisabledReason != nil || disabled.VerificationState != "active" {
		t.Errorf("disable: %+v", disabled)
	}
}

func TestUpdate(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()
	origin := "midaz"
	in := webhookInput("https://hooks.test/a")
	in.Origin = &origin
	in.RetrySchedule = []string{"1s"}
	sub, _ := f.create(t, "acme", in)
	probes := f.webhook.probeCount()

	f.clk.now = f.clk.now.Add(time.Hour)
	name, timeout, major, off := "renamed", "30s", 3, false
	updated, err := f.svc.Update(ctx, "acme", sub.ID, hubapi.SubscriptionUpdate{
		Name: &name, EventTypes: []string{"a.b", "a.b"}, SchemaMajor: &major, Origin: hubapi.SetNull[string](),
		RetrySchedule: hubapi.SetTo([]string{"5s", "5m"}), AttemptTimeout: &timeout, Enabled: &off,
		Sink: json.RawMessage(`{"url": "https://hooks.test/a", "type": "webhook"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	assertView(t, "patched", updated.Subscription, hubapi.Subscription{
		ID: sub.ID, TenantID: "acme", Name: "renamed", Sink: sub.Sink, EventTypes: []string{"a.b"}, SchemaMajor: 3, Ordering: "none",
		RetrySchedule: []string{"5s", "5m"}, AttemptTimeout: "30s", Enabled: false, VerificationState: "active",
		SigningSecret: hubapi.Masked, SignatureScheme: "lerian", CreatedAt: sub.CreatedAt, UpdatedAt: f.clk.now,
	})
	if f.webhook.probeCount() != probes {
		t.Errorf("resending the same sink re-verified it")
	}

	// An empty patch changes nothing, not even updated_at.
	f.clk.now = f.clk.now.Add(time.Hour)
	if same, err := f.svc.Update(ctx, "acme", sub.ID, hubapi.SubscriptionUpdate{}); err != nil || !same.UpdatedAt.Equal(updated.UpdatedAt) {
		t.Errorf("empty patch: updated_at %v, %v", same.UpdatedAt, err)
	}

	// A new destination is verified again, and can fail.
	f.webhook.setFailing("https://hooks.test/b", true)
	moved, err := f.svc.Update(ctx, "acme", sub.ID, hubapi.SubscriptionUpdate{Sink: json.RawMessage(`{"type": "webhook", "url": "https://hooks.test/b"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if moved.Sink["url"] != "https://hooks.test/b" || moved.VerificationState != "failed" || f.webhook.probeCount() != probes+1 {
		t.Errorf("moved sink: %+v after %d probes", moved, f.webhook.probeCount()-probes)
	}

	// A PATCHed signing secret rotates with the overlap.
	secret := "patched-in-signing-secret-0004"
	if _, err := f.svc.Update(ctx, "acme", sub.ID, hubapi.SubscriptionUpdate{SigningSecret: &secret}); err != nil {
		t.Fatal(err)
	}
	row, _ := f.st.GetSubscription(ctx, "acme", uuid.MustParse(sub.ID))
	if secrets, _ := f.svc.Sinks().SigningSecrets(row); len(secrets) != 2 || secrets[0] != secret {
		t.Errorf("after patching the secret, signing with %d secrets, newest %q", len(secrets), secrets[0])
	}
}

func TestUpdateCredentialsReencryptsAndReverifies(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()
	queue, _ := f.create(t, "acme", hubapi.SubscriptionCreate{
		Sink: json.RawMessage(`{"type": "sqs", "url": "https://queue.test/q", "token": "old-token"}`), EventTypes: []string{"*"},
	})
	probes := f.queue.probeCount()
	updated, err := f.svc.Update(ctx, "acme", queue.ID, hubapi.SubscriptionUpdate{
		Sink: json.RawMessage(`{"type": "sqs", "url": "https://queue.test/q", "token": "new-token"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if f.queue.probeCount() != probes+1 || updated.VerificationState != "active" {
		t.Errorf("new credentials: %d probes, state %q", f.queue.probeCount()-probes, updated.VerificationState)
	}
	row := f.raw(t, queue.ID)
	if plain, err := f.keys.Decrypt(*row.credentials, queue.ID, catalog.ColumnSinkCredentials); err != nil || string(plain) != `{"token":"new-token"}` {
		t.Errorf("stored credentials decrypt to %q, %v", plain, err)
	}
}

func TestUpdateValidation(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()
	hook, _ := f.create(t, "acme", webhookInput("https://hooks.test/a"))
	queue, _ := f.create(t, "acme", hubapi.SubscriptionCreate{
		Sink: json.RawMessage(`{"type": "sqs", "url": "q", "token": "t"}`), EventTypes: []string{"*"},
	})
	strPtr := func(s string) *string { return &s }
	zero := 0
	long := strings.Repeat("n", 201)
	secret := strings.Repeat("s", 24)
	cases := []struct {
		name      string
		id        string
		in        hubapi.SubscriptionUpdate
		wantCode  string
		wantField string
	}{
		{"long name", hook.ID, hubapi.SubscriptionUpdate{Name: &long}, "invalid_request", "name"},
		{"sink null", hook.ID, hubapi.SubscriptionUpdate{Sink: json.RawMessage(`null`)}, "invalid_sink", "sink"},
		{"sink config rejected", hook.ID, hubapi.SubscriptionUpdate{Sink: json.RawMessage(`{"type": "webhook"}`)}, "invalid_sink", "sink.url"},
		{"sink type change", hook.ID, hubapi.SubscriptionUpdate{Sink: json.RawMessage(`{"type": "pull"}`)}, "invalid_sink", "sink.type"},
		{"empty event types", hook.ID, hubapi.SubscriptionUpdate{EventTypes: []string{}}, "invalid_request", "event_types"},
		{"schema major 0", hook.ID, hubapi.SubscriptionUpdate{SchemaMajor: &zero}, "invalid_request", "schema_major"},
		{"empty origin", hook.ID, hubapi.SubscriptionUpdate{Origin: hubapi.SetTo("")}, "invalid_request", "origin"},
		{"bad retry step", hook.ID, hubapi.SubscriptionUpdate{RetrySchedule: hubapi.SetTo([]string{"11h"})}, "invalid_retry_schedule", "retry_schedule"},
		{"empty retry schedule", hook.ID, hubapi.SubscriptionUpdate{RetrySchedule: hubapi.SetTo([]string{})}, "invalid_retry_schedule", "retry_schedule"},
		{"bad timeout", hook.ID, hubapi.SubscriptionUpdate{AttemptTimeout: strPtr("0s")}, "invalid_request", "attempt_timeout"},
		{"short secret", hook.ID, hubapi.SubscriptionUpdate{SigningSecret: strPtr("short")}, "invalid_request", "signing_secret"},
		{"secret on a queue", queue.ID, hubapi.SubscriptionUpdate{SigningSecret: &secret}, "invalid_request", "signing_secret"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := f.raw(t, tc.id)
			_, err := f.svc.Update(ctx, "acme", tc.id, tc.in)
			if code, field := codeOf(err); code != tc.wantCode || field != tc.wantField {
				t.Errorf("err = %v (code %q field %q), want %q %q", err, code, field, tc.wantCode, tc.wantField)
			}
			if after := f.raw(t, tc.id); !sameRaw(before, after) {
				t.Errorf("a rejected patch changed the row")
			}
		})
	}
}

func TestListSubscriptionsFollowsCursors(t *testing.T) {
	f := newSubsFixture(t, true)
	ctx := context.Background()
	var want []string
	for i := range 5 {
		sub, _ := f.create(t, "acme", webhookInput("https://hooks.test/a"))
		want = append(want, sub.ID)
		if i%2 == 1 {
			f.clk.now = f.clk.now.Add(time.Second) // some rows share a created_at
		}
	}
	f.create(t, "globex", webhookInput("https://hooks.test/a"))

	var got []string
	cursor := ""
	pages := 0
	for {
		page, err := f.svc.List(ctx, "acme", hubapi.ListParams{Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, s := range page.Items {
			got = append(got, s.ID)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	if !slices.Equal(got, want) || pages != 3 {
		t.Errorf("listed %q in %d pages, want %q in 3", got, pages, want)
	}

	tenantsCursor, err := service.NewTenants(f.st.Catalog, f.st.Lifecycle, f.clk.Now).List(ctx, hubapi.ListParams{Limit: 1})
	if err != nil || tenantsCursor.NextCursor == nil {
		t.Fatal("no tenants cursor to replay", err)
	}
	for _, bad := range []string{"garbage", *tenantsCursor.NextCursor, base64.RawURLEncoding.EncodeToString([]byte("subscriptions:1.not-a-uuid"))} {
		_, err := f.svc.List(ctx, "acme", hubapi.ListParams{Cursor: bad})
		if code, field := codeOf(err); code != "invalid_request" || field != "cursor" {
			t.Errorf("cursor %q: err = %v", bad, err)
		}
	}
}
