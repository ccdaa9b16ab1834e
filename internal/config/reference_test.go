package config_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/config"
)

const referencePage = "../../docs/configuration.md"

// TestReferenceIsCurrent fails when a setting was added or changed without
// regenerating the page: `make docs` (or `hubctl config docs >
// docs/configuration.md`) fixes it.
func TestReferenceIsCurrent(t *testing.T) {
	var want bytes.Buffer
	if err := config.WriteReference(&want); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(referencePage)
	if err != nil {
		t.Fatalf("%v: generate it with make docs", err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("docs/configuration.md is stale: run make docs (or hubctl config docs > docs/configuration.md) and commit it\n%s", firstDifference(string(got), want.String()))
	}
}

func TestReferenceListsEverySetting(t *testing.T) {
	var page bytes.Buffer
	if err := config.WriteReference(&page); err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(page.String(), "\n") {
		if cells := strings.Split(line, " | "); strings.HasPrefix(line, "| `STREAMING_HUB_") && len(cells) >= 5 {
			name := strings.Trim(strings.TrimSuffix(strings.TrimPrefix(cells[0], "| "), " 🔒"), "`")
			rows[name] = line
		}
	}
	settings := config.Settings()
	if len(rows) != len(settings) {
		t.Errorf("the page has %d setting rows, the registry %d settings", len(rows), len(settings))
	}
	for _, s := range settings {
		row, ok := rows[s.Env]
		if !ok {
			t.Errorf("%s has no row", s.Env)
			continue
		}
		if s.Secret != strings.Contains(row, "🔒") {
			t.Errorf("%s: secret %v, but the row says otherwise: %s", s.Env, s.Secret, row)
		}
		if !strings.Contains(row, "`"+s.Key+"`") {
			t.Errorf("%s: the row lacks its YAML key %s", s.Env, s.Key)
		}
	}
	// A pipe in a value (the default topic exclusion has one) must not
	// split the table.
	if !strings.Contains(page.String(), `\.(commands\|dlq)$`) {
		t.Error("the default of STREAMING_HUB_KAFKA_TOPICS_EXCLUDE is not escaped for the table")
	}
}

func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("first difference at line %d:\n  committed: %s\n  generated: %s", i+1, gl, wl)
		}
	}
	return ""
}
