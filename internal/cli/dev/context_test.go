package dev

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/profile"
)

func TestContextNameIsStablePerInstance(t *testing.T) {
	home := t.TempDir()
	defaultDir := filepath.Join(home, "state", "hubctl", "dev")
	for _, tc := range []struct {
		name      string
		kafkaPort int
		brokers   []string
		dataDir   string
		want      string
	}{
		{"the default instance", DefaultKafkaPort, []string{"127.0.0.1:19092"}, defaultDir, "dev"},
		{"the default data dir written another way", DefaultKafkaPort, []string{"127.0.0.1:19092"}, defaultDir + "/./", "dev"},
		{"another port", 29092, []string{"127.0.0.1:29092"}, defaultDir, "dev-29092"},
		{"another data dir on the default port", DefaultKafkaPort, []string{"127.0.0.1:19092"}, filepath.Join(home, "other"), "dev-19092"},
		{"another port and data dir", 29092, []string{"127.0.0.1:29092"}, filepath.Join(home, "other"), "dev-29092"},
		{"a port picked at start", 0, []string{"127.0.0.1:41234"}, filepath.Join(home, "other"), "dev-41234"},
	} {
		got, err := contextName(tc.kafkaPort, tc.brokers, tc.dataDir, defaultDir)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	for _, brokers := range [][]string{nil, {"no-port"}} {
		if got, err := contextName(0, brokers, defaultDir, defaultDir); err == nil {
			t.Errorf("port 0 with brokers %q: %q, want an error", brokers, got)
		}
	}
}

// A second dev instance stores its own context beside the first one's and
// leaves the current one alone; a restart of the first takes its context
// back as current.
func TestStoreDevContextLeavesOtherInstancesAlone(t *testing.T) {
	dir := t.TempDir()
	f, _, _, _ := cmdtest.Factory(map[string]string{profile.EnvConfigDir: dir})
	path := filepath.Join(dir, "config.yaml")
	first := profile.Context{Name: "dev", Server: "http://127.0.0.1:8080", Token: "key-1", Tenant: "default", Brokers: []string{"127.0.0.1:19092"}}
	second := profile.Context{Name: "dev-29092", Server: "http://127.0.0.1:28080", Token: "key-2", Tenant: "default", Brokers: []string{"127.0.0.1:29092"}}

	note := storeDevContext(f, first)
	if !strings.Contains(note, `Context "dev" is current`) {
		t.Errorf("first note: %q", note)
	}
	note = storeDevContext(f, second)
	if !strings.Contains(note, `Context "dev-29092" stored`) || !strings.Contains(note, `"dev" stays current`) ||
		!strings.Contains(note, "hubctl context use dev-29092") {
		t.Errorf("second note: %q", note)
	}
	file, err := profile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := file.Get("dev"); file.Current != "dev" || !sameContext(got, first) {
		t.Errorf("after the second instance: current %q, dev %+v; want the first untouched and current", file.Current, got)
	}
	if got, _ := file.Get("dev-29092"); !sameContext(got, second) {
		t.Errorf("second context %+v, want %+v", got, second)
	}

	// The second instance's context current, the first restarts: it keeps
	// its name and stays out of the way.
	if err := file.Use("dev-29092"); err != nil {
		t.Fatal(err)
	}
	if err := file.Save(path); err != nil {
		t.Fatal(err)
	}
	if note := storeDevContext(f, second); !strings.Contains(note, `Context "dev-29092" is current`) {
		t.Errorf("restart of the current instance: %q", note)
	}
	if note := storeDevContext(f, first); !strings.Contains(note, `"dev-29092" stays current`) {
		t.Errorf("restart of the other instance: %q", note)
	}
}

func TestStoreDevContextWithoutAHomeSaysSo(t *testing.T) {
	f, _, _, _ := cmdtest.Factory(nil)
	if note := storeDevContext(f, profile.Context{Name: "dev"}); !strings.HasPrefix(note, "Context not stored: ") {
		t.Errorf("note %q", note)
	}
}

func sameContext(a, b profile.Context) bool {
	return a.Name == b.Name && a.Server == b.Server && a.Token == b.Token && a.Tenant == b.Tenant &&
		strings.Join(a.Brokers, ",") == strings.Join(b.Brokers, ",")
}
