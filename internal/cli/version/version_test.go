package version

import (
	"testing"

	"github.com/hubctl/hubctl/internal/buildinfo"
)

func TestVersionLineLeavesOutWhatIsUnknown(t *testing.T) {
	for _, tc := range []struct {
		info buildinfo.Info
		want string
	}{
		{buildinfo.Info{Version: "v1.2.3", Commit: buildinfo.Unknown, Date: buildinfo.Unknown, GoVersion: "go1.26", Platform: "linux/amd64"},
			"hubctl v1.2.3 (go1.26, linux/amd64)"},
		{buildinfo.Info{Version: "dev", Commit: "40a1afc0d1e2", Modified: true, Date: "2026-12-01T20:30:15Z", GoVersion: "go1.26", Platform: "linux/amd64"},
			"hubctl dev (commit 40a1afc0d1e2 (modified), built 2026-12-01T20:30:15Z, go1.26, linux/amd64)"},
	} {
		if got := versionLine(tc.info); got != tc.want {
			t.Errorf("versionLine = %q, want %q", got, tc.want)
		}
	}
}
