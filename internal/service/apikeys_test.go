package service_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestAPIKeyLifecycle(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	st := openStore(t)
	if _, err := service.NewTenants(st.Catalog, st.Lifecycle, clk.Now).Create(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	keys := service.NewAPIKeys(st.Catalog, clk.Now)

	created, err := keys.Create(ctx, "acme", "ci deploys")
	if err != nil {
		t.Fatal(err)
	}
	if created.Name != "ci deploys" || !strings.HasPrefix(created.Key, crypto.APITokenPrefix) ||
		!strings.HasPrefix(created.Key, created.Prefix) || len(created.Prefix) >= len(created.Key)/2 || !created.CreatedAt.Equal(clk.now) {
		t.Errorf("created %+v", created)
	}

	holder, err := keys.Authenticate(ctx, created.Key)
	if err != nil || holder != (service.KeyHolder{TenantID: "acme", KeyID: created.ID}) {
		t.Errorf("authenticate = %+v, %v", holder, err)
	}

	page, err := keys.List(ctx, "acme", hubapi.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.NextCursor != nil {
		t.Fatalf("list = %+v", page)
	}
	listed := page.Items[0]
	if listed.ID != created.ID || listed.Prefix != created.Prefix || listed.LastUsedAt == nil || !listed.LastUsedAt.Equal(clk.now) || listed.RevokedAt != nil {
		t.Errorf("listed %+v, want the created key, used now, not revoked", listed)
	}
	raw, err := json.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), created.Key) || strings.Contains(string(raw), base64.StdEncoding.EncodeToString(crypto.HashAPIToken(created.Key))) {
		t.Errorf("the listing shows the token or its hash: %s", raw)
	}

	clk.now = clk.now.Add(time.Hour)
	revoked, err := keys.Revoke(ctx, "acme", created.ID)
	if err != nil || revoked.RevokedAt == nil || !revoked.RevokedAt.Equal(clk.now) {
		t.Fatalf("revoke = %+v, %v", revoked, err)
	}
	if _, err := keys.Authenticate(ctx, created.Key); !errors.Is(err, hubapi.ErrInvalidAPIKey) {
		t.Errorf("revoked key authenticated: err = %v", err)
	}
}

func TestAuthenticateRefusesKeysOfInactiveTenants(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	st := openStore(t)
	tenants := service.NewTenants(st.Catalog, st.Lifecycle, clk.Now)
	if _, err := tenants.Create(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	keys := service.NewAPIKeys(st.Catalog, clk.Now)
	created, err := keys.Create(ctx, "acme", "ci")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tenants.SetStatus(ctx, "acme", hubapi.TenantInactive); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Authenticate(ctx, created.Key); !errors.Is(err, hubapi.ErrTenantInactive) {
		t.Errorf("inactive tenant's key: err = %v, want ErrTenantInactive", err)
	}
	if _, err := tenants.SetStatus(ctx, "acme", hubapi.TenantActive); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Authenticate(ctx, created.Key); err != nil {
		t.Errorf("reactivated tenant's key: err = %v", err)
	}
}

func TestAPIKeyErrors(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	st := openStore(t)
	tenants := service.NewTenants(st.Catalog, st.Lifecycle, clk.Now)
	for _, id := range []string{"acme", "globex"} {
		if _, err := tenants.Create(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	keys := service.NewAPIKeys(st.Catalog, clk.Now)
	globexKey, err := keys.Create(ctx, "globex", "theirs")
	if err != nil {
		t.Fatal(err)
	}
	const missingKey = "0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b"

	cases := []struct {
		name      string
		call      func() error
		wantCode  string
		wantField string
		wantStore error
	}{
		{"create for unknown tenant", func() error { _, err := keys.Create(ctx, "nobody", "ci"); return err }, hubapi.CodeTenantNotFound, "", pg.ErrNotFound},
		{"list of unknown tenant", func() error { _, err := keys.List(ctx, "nobody", hubapi.ListParams{}); return err }, hubapi.CodeTenantNotFound, "", pg.ErrNotFound},
		{"revoke of unknown tenant", func() error { _, err := keys.Revoke(ctx, "nobody", missingKey); return err }, hubapi.CodeTenantNotFound, "", pg.ErrNotFound},
		{"revoke missing key", func() error { _, err := keys.Revoke(ctx, "acme", missingKey); return err }, service.CodeAPIKeyNotFound, "", pg.ErrNotFound},
		{"revoke another tenant's key", func() error { _, err := keys.Revoke(ctx, "acme", globexKey.ID); return err }, service.CodeAPIKeyNotFound, "", pg.ErrNotFound},
		{"revoke malformed key id", func() error { _, err := keys.Revoke(ctx, "acme", "42"); return err }, hubapi.CodeInvalidRequest, "key_id", nil},
		{"create bad tenant id", func() error { _, err := keys.Create(ctx, "no spaces", "ci"); return err }, hubapi.CodeInvalidRequest, "id", nil},
		{"create without name", func() error { _, err := keys.Create(ctx, "acme", " "); return err }, hubapi.CodeInvalidRequest, "name", nil},
		{"list bad limit", func() error { _, err := keys.List(ctx, "acme", hubapi.ListParams{Limit: -1}); return err }, hubapi.CodeInvalidRequest, "limit", nil},
		{"list bad cursor", func() error { _, err := keys.List(ctx, "acme", hubapi.ListParams{Cursor: "nope"}); return err }, hubapi.CodeInvalidRequest, "cursor", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			if code, field := codeOf(err); code != c.wantCode || field != c.wantField {
				t.Errorf("err = %v: code %q field %q, want %q %q", err, code, field, c.wantCode, c.wantField)
			}
			if c.wantStore != nil && !errors.Is(err, c.wantStore) {
				t.Errorf("err = %v does not wrap %v", err, c.wantStore)
			}
		})
	}

	// The other tenant's key survived the attempt to revoke it.
	if _, err := keys.Authenticate(ctx, globexKey.Key); err != nil {
		t.Errorf("globex's key after acme tried to revoke it: %v", err)
	}
}

func TestCheckAPIKeyName(t *testing.T) {
	cases := []struct {
		name  string
		valid bool
	}{
		{"ci", true},
		{"déploiement nocturne", true},
		{strings.Repeat("é", service.MaxAPIKeyNameLength), true},
		{strings.Repeat("a", service.MaxAPIKeyNameLength+1), false},
		{"", false},
		{"   ", false},
		{"nul\x00byte", false},
		{"new\nline", false},
		{"bad \xff utf-8", false},
	}
	for _, c := range cases {
		err := service.CheckAPIKeyName(c.name)
		if (err == nil) != c.valid {
			t.Errorf("CheckAPIKeyName(%q) = %v, want valid = %v", c.name, err, c.valid)
		}
		if code, field := codeOf(err); err != nil && (code != hubapi.CodeInvalidRequest || field != "name") {
			t.Errorf("CheckAPIKeyName(%q): code %q field %q, want invalid_request on name", c.name, code, field)
		}
	}
}

func TestAPIKeyChecksComeBeforeTheDatabase(t *testing.T) {
	ctx := context.Background()
	// No store at all: these must all be answered without one.
	keys := service.NewAPIKeys(nil, time.Now)
	for _, token := range []string{"", "Bearer x", "whsec_abc", crypto.APITokenPrefix + strings.Repeat("a", 300)} {
		if _, err := keys.Authenticate(ctx, token); !errors.Is(err, hubapi.ErrInvalidAPIKey) {
			t.Errorf("Authenticate(%.20q…) = %v, want ErrInvalidAPIKey", token, err)
		}
	}
	forged := []string{
		base64.RawURLEncoding.EncodeToString([]byte("api_keys:1.not-a-uuid")),
		base64.RawURLEncoding.EncodeToString([]byte("api_keys:x.0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b")),
		base64.RawURLEncoding.EncodeToString([]byte("api_keys:253402300800000000.0196a1c2-7d3e-7f00-8a4b-1c2d3e4f5a6b")),
		base64.RawURLEncoding.EncodeToString([]byte("tenants:acme")),
	}
	for _, cursor := range forged {
		_, err := keys.List(ctx, "acme", hubapi.ListParams{Cursor: cursor})
		if code, field := codeOf(err); code != hubapi.CodeInvalidRequest || field != "cursor" {
			t.Errorf("cursor %q: err = %v, want invalid_request on cursor", cursor, err)
		}
	}
}

func TestListAPIKeysFollowsCursors(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	st := openStore(t)
	if _, err := service.NewTenants(st.Catalog, st.Lifecycle, clk.Now).Create(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	keys := service.NewAPIKeys(st.Catalog, clk.Now)
	var want []string
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		k, err := keys.Create(ctx, "acme", name)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, k.ID)
	}
	var got []string
	params := hubapi.ListParams{Limit: 2}
	for range 10 {
		page, err := keys.List(ctx, "acme", params)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range page.Items {
			got = append(got, k.ID)
		}
		if page.NextCursor == nil {
			break
		}
		params.Cursor = *page.NextCursor
	}
	// All five share a creation time: the (time-ordered) id keeps them in
	// creation order.
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("ids = %v, want %v", got, want)
	}
}
