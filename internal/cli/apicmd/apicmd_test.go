package apicmd_test

import (
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/openapi"
)

// TestOpenAPIPrintsTheServedDocument: the offline copy is byte for byte
// what GET /openapi.json serves, so tooling fed either sees one contract.
func TestOpenAPIPrintsTheServedDocument(t *testing.T) {
	want, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	r := clitest.Run(t, nil, "api", "openapi")
	if r.Code != 0 || r.Stdout != string(want) || r.Stderr != "" {
		t.Fatalf("hubctl api openapi = exit %d, %d bytes on stdout (want %d), stderr %q", r.Code, len(r.Stdout), len(want), r.Stderr)
	}
	if r := clitest.Run(t, nil, "api", "openapi", "extra"); r.Code == 0 {
		t.Errorf("hubctl api openapi extra: exit 0, want a usage error")
	}
}
