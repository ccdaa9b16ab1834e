package config

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

func TestMaskDSN(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, dsn, want string
	}{
		{"empty", "", ""},
		{"url",
			"postgres://hub:s3cret@db.internal:5432/hub?sslmode=require",
			"postgres://hub:****@db.internal:5432/hub?sslmode=require"},
		{"postgresql scheme",
			"postgresql://hub:s3cret@db/hub",
			"postgresql://hub:****@db/hub"},
		{"url without password", "postgres://hub@db/hub", "postgres://hub@db/hub"},
		{"url without user", "postgres://db:5432/hub", "postgres://db:5432/hub"},
		{"empty user", "postgres://:s3cret@db/hub", "postgres://:****@db/hub"},
		{"unescaped @ / and : in password",
			"postgres://hub:p@ss/w:rd@db:5432/hub",
			"postgres://hub:****@db:5432/hub"},
		{"several hosts",
			"postgres://hub:s3cret@h1:5432,h2:5433/hub?target_session_attrs=read-write",
			"postgres://hub:****@h1:5432,h2:5433/hub?target_session_attrs=read-write"},
		{"password parameter",
			"postgres://db/hub?sslmode=disable&password=s3cret&user=hub",
			"postgres://db/hub?sslmode=disable&password=****&user=hub"},
		{"escaped password parameter name",
			"postgres://db/hub?pass%77ord=s3cret",
			"postgres://db/hub?pass%77ord=****"},
		{"password in both places",
			"postgres://hub:one@db/hub?password=two",
			"postgres://hub:****@db/hub?password=****"},
		{"@ in the query after a password parameter",
			"postgres://db/hub?password=s3cret&application_name=a@b",
			"postgres://db/hub?password=****&application_name=a@b"},
		{"keyword form",
			"host=db user=hub password=s3cret dbname=hub",
			"host=db user=hub password=**** dbname=hub"},
		{"quoted password with escapes",
			`host=db password='s3 cr\'et\\' dbname=hub`,
			"host=db password=**** dbname=hub"},
		{"spaces around =",
			"password = s3cret  host=db",
			"password = ****  host=db"},
		{"escaped space in a bare value",
			`password=s3\ cret host=db`,
			"password=**** host=db"},
		{"empty quoted password", "host=db password=''", "host=db password=****"},
		{"keyword in capitals", "host=db PASSWORD=s3cret", "host=db PASSWORD=****"},
		{"keyword form without password", "host=db user=hub", "host=db user=hub"},
		{"unterminated quote", "host=db password='s3cret", "****"},
		{"not a DSN", "s3cret", "****"},
		{"key without =", "host=db s3cret", "****"},
	}
	for _, tt := range tests {
		if got := maskDSN(tt.dsn); got != tt.want {
			t.Errorf("%s: maskDSN(%q) = %q, want %q", tt.name, tt.dsn, got, tt.want)
		}
	}
}

// FuzzMaskDSN checks that a password is hidden exactly, whatever it
// contains, in both DSN forms, and that masking arbitrary text never panics
// and is stable (masking a masked value changes nothing).
func FuzzMaskDSN(f *testing.F) {
	for _, seed := range []string{"s3cret", "p@ss/w:rd", "it's", `back\slash`, " spaced ", "?&=#", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := maskDSN(s)
		if twice := maskDSN(once); twice != once {
			t.Errorf("maskDSN(%q) = %q, but masking that again gives %q", s, once, twice)
		}

		url := "postgres://hub:" + s + "@db:5432/hub?sslmode=require"
		if got, want := maskDSN(url), "postgres://hub:****@db:5432/hub?sslmode=require"; got != want {
			t.Errorf("maskDSN(%q) = %q, want %q", url, got, want)
		}

		quoted := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)
		keyword := "host=db password='" + quoted + "' dbname=hub"
		if got, want := maskDSN(keyword), "host=db password=**** dbname=hub"; got != want {
			t.Errorf("maskDSN(%q) = %q, want %q", keyword, got, want)
		}
	})
}

func TestShowMasksSecrets(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, LoadOptions{LookupEnv: envOf(map[string]string{
		"STREAMING_HUB_POSTGRES_DSN":              "postgres://hub:pg-pass@db:5432/hub",
		"STREAMING_HUB_KAFKA_SCRAM_MECHANISM":     "SCRAM-SHA-256",
		"STREAMING_HUB_KAFKA_SCRAM_USERNAME":      "hub",
		"STREAMING_HUB_KAFKA_SCRAM_PASSWORD":      "scram-pass",
		"STREAMING_HUB_KAFKA_OAUTH_CLIENT_SECRET": "oauth-client-secret",
		"STREAMING_HUB_DEV_KEK":                   "dev-kek-value",
		"STREAMING_HUB_ADMIN_TOKEN":               "admin-token-0123456789",
	})})

	want := map[string]string{
		"STREAMING_HUB_POSTGRES_DSN":              "postgres://hub:****@db:5432/hub",
		"STREAMING_HUB_KAFKA_SCRAM_USERNAME":      "hub",
		"STREAMING_HUB_KAFKA_SCRAM_PASSWORD":      "****",
		"STREAMING_HUB_KAFKA_OAUTH_CLIENT_SECRET": "****",
		"STREAMING_HUB_DEV_KEK":                   "****",
		"STREAMING_HUB_ADMIN_TOKEN":               "****",
	}
	for env, value := range want {
		if entry := shown(t, cfg, env); entry.Value != value || entry.Source != SourceEnv {
			t.Errorf("%s shown as %+v, want %q from env", env, entry, value)
		}
	}

	out, err := json.Marshal(cfg.Show())
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("starting", "config", cfg)
	if !strings.Contains(logged.String(), "config.STREAMING_HUB_ADMIN_TOKEN=****") {
		t.Errorf("logged config lacks the masked admin token: %s", logged.String())
	}
	out = append(out, logged.Bytes()...)
	for _, secret := range []string{"pg-pass", "scram-pass", "oauth-client-secret", "dev-kek-value", "admin-token-0123456789"} {
		if strings.Contains(string(out), secret) {
			t.Errorf("Show leaks %q: %s", secret, out)
		}
	}
}

func TestShowKeywordDSN(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, LoadOptions{LookupEnv: envOf(map[string]string{
		"STREAMING_HUB_POSTGRES_DSN": "host=db user=hub password='pg pass' dbname=hub",
	})})
	if got := shown(t, cfg, "STREAMING_HUB_POSTGRES_DSN").Value; got != "host=db user=hub password=**** dbname=hub" {
		t.Errorf("DSN shown as %q", got)
	}
}

func TestShowListsEverySettingInOrder(t *testing.T) {
	t.Parallel()
	entries := mustLoad(t, LoadOptions{}).Show()
	var got, want []string
	for _, e := range entries {
		got = append(got, e.Setting)
	}
	for _, s := range Settings() {
		want = append(want, s.Env)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Show order = %v, want %v", got, want)
	}
	// Unset secrets stay visibly empty rather than looking configured.
	if e := entries[len(entries)-1]; e.Setting != "STREAMING_HUB_ADMIN_TOKEN" || e.Value != "" {
		t.Errorf("last entry = %+v, want an empty admin token", e)
	}

	out, err := json.Marshal(entries[:1])
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"setting":"STREAMING_HUB_ENV","value":"production","source":"default"}]`; string(out) != want {
		t.Errorf("JSON = %s, want %s", out, want)
	}
}

func TestProblemsNeverShowSecrets(t *testing.T) {
	t.Parallel()
	got := problemLines(t, LoadOptions{LookupEnv: envOf(map[string]string{
		"STREAMING_HUB_ADMIN_TOKEN": "short-secret",
	})})
	if len(got) != 1 || strings.Contains(got[0], "short-secret") {
		t.Errorf("problems = %q, want one line without the token", got)
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"role", "role", 0},
		{"", "role", 4},
		{"rol", "role", 1},
		{"dispatch_worker", "dispatch_workers", 1},
		{"kafka_borkers", "kafka_brokers", 2},
		{"kitten", "sitting", 3},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
