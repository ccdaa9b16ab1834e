package hub_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/hubctl/hubctl/"

// TestFrontEndsReachTheUseCasesThroughTheInterface holds the front ends to
// hubapi.ControlPlane: the HTTP API and the portal do not depend on the
// use cases' package at all (serve hands them the assembly), and no CLI verb imports
// the use cases or their assembly (hubaccess.Open hands them the
// interface in either mode), so none can skip the tenant checks the
// interface's implementations make.
func TestFrontEndsReachTheUseCasesThroughTheInterface(t *testing.T) {
	behindTheInterface := []string{module + "internal/service", module + "internal/hub"}

	for _, frontEnd := range []string{"./internal/api", "./internal/portal"} {
		for _, dep := range goList(t, "-deps", frontEnd) {
			if slices.Contains(behindTheInterface, dep) {
				t.Errorf("%s depends on %s", frontEnd, dep)
			}
		}
	}

	// The CLI packages that assemble a hub rather than use one.
	assemblers := map[string]string{
		"internal/cli/hubaccess": "opens either mode and hands out the interface",
		"internal/cli/serve":     "runs the hub",
		"internal/cli/dev":       "seeds a database before any hub runs on it",
		"internal/cli/kek":       "re-encrypts the database's secrets, which no hub operation does",
		"internal/cli/clitest":   "starts hubs for the CLI's tests",
	}
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./internal/cli/...") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		if _, ok := assemblers[pkg]; ok {
			continue
		}
		for _, imported := range fields[1:] {
			if slices.Contains(behindTheInterface, imported) {
				t.Errorf("%s imports %s: reach the hub through hubaccess and hubapi.ControlPlane", pkg, imported)
			}
		}
	}
}

// goList runs go list from the module's root, one answer per line.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}
