package clitest

import (
	"crypto/tls"
	"encoding/json"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/profile"
	"github.com/hubctl/hubctl/internal/testutil/hubtest"
)

// AdminToken is the admin token of the hub Serve starts.
const AdminToken = "clitest-admin-token-0123456789abcdef"

// devKEK is the key-encryption key of both modes: 32 bytes of hex. The
// API and the direct mode share it, so either can read what the other
// sealed, as serve and the CLI do in production.
const devKEK = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

// Direct is the environment of direct mode on dsn with everything the
// subscription commands need: the dev KEK and private sinks allowed, so
// that webhooks may point at a receiver on 127.0.0.1.
func Direct(dsn string) map[string]string {
	return map[string]string{
		"STREAMING_HUB_POSTGRES_DSN":        dsn,
		"STREAMING_HUB_ENV":                 "local",
		"STREAMING_HUB_DEV_KEK":             devKEK,
		"STREAMING_HUB_ALLOW_PRIVATE_SINKS": "true",
	}
}

// Remote is the environment of remote mode against the hub at url with
// token, and nothing else: no database.
func Remote(url, token string) map[string]string {
	return map[string]string{"HUBCTL_SERVER": url, "HUBCTL_TOKEN": token}
}

// Profile is an environment whose only setting is a profile file with c
// as its current context, as hubctl dev or login leave one.
func Profile(t testing.TB, c profile.Context) map[string]string {
	t.Helper()
	dir := t.TempDir()
	file := &profile.File{Current: c.Name, Contexts: []profile.Context{c}}
	if err := file.Save(filepath.Join(dir, "config.yaml")); err != nil {
		t.Fatal(err)
	}
	return map[string]string{profile.EnvConfigDir: dir}
}

// With returns env plus the extra variables, env unchanged.
func With(env map[string]string, extra map[string]string) map[string]string {
	merged := maps.Clone(env)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, extra)
	return merged
}

// Serve starts the hub's API over the database dsn, assembled as serve
// assembles it (hub.NewControlPlane, hub.NewAPI) under the configuration of
// Direct, with AdminToken as the admin token, and returns its URL. It
// stops with the test.
func Serve(t testing.TB, dsn string) string {
	t.Helper()
	_, url := hubtest.Start(t, dsn, With(Direct(dsn), map[string]string{"STREAMING_HUB_ADMIN_TOKEN": AdminToken}))
	return url
}

// ServeTLS is Serve over HTTPS with the certificate cert.
func ServeTLS(t testing.TB, dsn string, cert tls.Certificate) string {
	t.Helper()
	_, url := hubtest.StartTLS(t, dsn, With(Direct(dsn), map[string]string{"STREAMING_HUB_ADMIN_TOKEN": AdminToken}), cert)
	return url
}

// Stable re-encodes the JSON a command printed with the values of the
// named keys, at any depth, replaced by "(set)" (null and "" stay as they
// are): ids, times and secrets differ between two runs of one scenario,
// whether they are there does not. Empty output stays empty.
func Stable(t testing.TB, stdout string, keys ...string) string {
	t.Helper()
	if strings.TrimSpace(stdout) == "" {
		return ""
	}
	var v any
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	mask := make(map[string]bool, len(keys))
	for _, k := range keys {
		mask[k] = true
	}
	out, err := json.Marshal(stable(v, mask))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func stable(v any, mask map[string]bool) any {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if mask[k] && child != nil && child != "" {
				v[k] = "(set)"
				continue
			}
			v[k] = stable(child, mask)
		}
	case []any:
		for i, child := range v {
			v[i] = stable(child, mask)
		}
	}
	return v
}
