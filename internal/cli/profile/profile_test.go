package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestPath(t *testing.T) {
	if got, _ := Path(env(map[string]string{EnvConfigDir: "/x/hub", "XDG_CONFIG_HOME": "/y"})); got != "/x/hub/config.yaml" {
		t.Errorf("with %s: %s", EnvConfigDir, got)
	}
	if got, _ := Path(env(map[string]string{"XDG_CONFIG_HOME": "/y"})); got != "/y/hubctl/config.yaml" {
		t.Errorf("with XDG_CONFIG_HOME: %s", got)
	}
	// A relative XDG_CONFIG_HOME is invalid by its specification.
	if got, _ := Path(env(map[string]string{"XDG_CONFIG_HOME": "rel", "HOME": "/home/ann"})); !strings.HasPrefix(got, "/home/ann/") {
		t.Errorf("with a relative XDG_CONFIG_HOME: %s", got)
	}
	if got, err := Path(env(nil)); err == nil {
		t.Errorf("without a home: %s, want an error (no profiles)", got)
	}
}

func TestSaveLoadKeepsTokensPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "config.yaml")
	f, err := Load(path)
	if err != nil || len(f.Contexts) != 0 {
		t.Fatalf("missing file: %+v, %v; want empty", f, err)
	}
	f.Set(Context{Name: "dev", Server: "http://127.0.0.1:8080", Token: "hub_secret"})
	f.Set(Context{Name: "prod", Server: "https://hub.example.com", Token: "t1", Tenant: "acme"})
	f.Set(Context{Name: "dev", Server: "http://127.0.0.1:18080", Token: "hub_secret2"})
	if err := f.Use("prod"); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(path); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		info, err := os.Stat(p)
		if err != nil || info.Mode().Perm() != want {
			t.Errorf("%s mode %v (%v), want %v", p, info.Mode().Perm(), err, want)
		}
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Current != "prod" || len(got.Contexts) != 2 {
		t.Fatalf("loaded %+v", got)
	}
	if dev, _ := got.Get("dev"); dev.Server != "http://127.0.0.1:18080" || dev.Token != "hub_secret2" {
		t.Errorf("dev context %+v, want the replaced one", dev)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the file (no temp files left)", len(entries))
	}
}

func TestActiveAndUse(t *testing.T) {
	f := &File{}
	if _, ok, err := f.Active(env(nil)); ok || err != nil {
		t.Fatalf("empty file: ok %v err %v", ok, err)
	}
	if err := f.Use("dev"); err == nil || !strings.Contains(err.Error(), "hubctl login") {
		t.Errorf("Use on an empty file: %v, want a pointer to hubctl login", err)
	}
	f.Set(Context{Name: "dev", Server: "a"})
	f.Set(Context{Name: "prod", Server: "b"})
	if err := f.Use("staging"); err == nil || !strings.Contains(err.Error(), "dev, prod") {
		t.Errorf("Use of an unknown context: %v, want the known names", err)
	}
	if err := f.Use("dev"); err != nil {
		t.Fatal(err)
	}
	if c, ok, _ := f.Active(env(nil)); !ok || c.Server != "a" {
		t.Errorf("current: %+v %v", c, ok)
	}
	if c, ok, _ := f.Active(env(map[string]string{EnvContext: "prod"})); !ok || c.Server != "b" {
		t.Errorf("%s=prod: %+v %v", EnvContext, c, ok)
	}
	if _, _, err := f.Active(env(map[string]string{EnvContext: "gone"})); err == nil {
		t.Error("an unknown HUBCTL_CONTEXT must be an error, not another hub")
	}
}

func TestLoadRefusesAFileThatIsNotProfiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("contexts: [unclosed"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Load of junk: %v, want an error naming the file", err)
	}
}

// A context written before brokers were stored still loads, without any;
// one with brokers keeps them, in order.
func TestContextBrokersRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	old := "current_context: dev\ncontexts:\n  - name: dev\n    server: http://127.0.0.1:8080\n    token: k\n"
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := f.Get("dev"); c.Brokers != nil || c.Tenant != "" {
		t.Errorf("old context %+v, want no brokers and no tenant", c)
	}
	f.Set(Context{Name: "dev", Server: "http://127.0.0.1:8080", Token: "k", Tenant: "default", Brokers: []string{"127.0.0.1:19092", "127.0.0.1:19093"}})
	if err := f.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := got.Get("dev")
	if c.Tenant != "default" || strings.Join(c.Brokers, ",") != "127.0.0.1:19092,127.0.0.1:19093" {
		t.Errorf("loaded %+v", c)
	}
}
