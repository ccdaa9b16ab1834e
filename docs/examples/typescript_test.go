package examples_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hubctl/hubctl/internal/openapi"
)

// The npm tools the TypeScript example is checked with, pinned.
const (
	openapiTypescript = "openapi-typescript@7.13.0"
	typescript        = "typescript@5.9.3"
)

// TestTypeScriptClientTypechecks generates TypeScript types from the
// served OpenAPI document with openapi-typescript and typechecks
// docs/examples/typescript/client.ts against them with tsc, so the document
// is shown to be usable from another language and the example to be true.
// Without Node.js it is skipped, except under CI=true, where it must run.
func TestTypeScriptClientTypechecks(t *testing.T) {
	npx, err := exec.LookPath("npx")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but npx (Node.js) is not installed: the TypeScript example must be checked in CI")
		}
		t.Skip("npx (Node.js) is not installed, so docs/examples/typescript is not typechecked here")
	}
	doc, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("typescript/client.ts")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, content := range map[string][]byte{"hubctl.openapi.json": doc, "client.ts": example} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), npx, append([]string{"--yes"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npx %v: %v\n%s", args, err, out)
		}
	}
	run(openapiTypescript, "hubctl.openapi.json", "-o", "hubctl-api.d.ts")
	run("-p", typescript, "tsc", "--noEmit", "--strict", "--noUncheckedIndexedAccess",
		"--target", "es2022", "--module", "esnext", "--moduleResolution", "bundler",
		"--lib", "es2022,dom", "client.ts")
}
