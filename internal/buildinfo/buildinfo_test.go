package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFill(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		stamped Info
		bi      *debug.BuildInfo
		want    Info
	}{
		{"release build: the stamp wins", Info{Version: "v1.2.0", Commit: "abc", Date: "2026-12-01T00:00:00Z"},
			&debug.BuildInfo{Main: debug.Module{Version: "v1.1.0"}, Settings: settings("vcs.revision", "fff")},
			Info{Version: "v1.2.0", Commit: "abc", Date: "2026-12-01T00:00:00Z"}},
		{"build in a checkout", Info{},
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: settings(
				"vcs.revision", "0123456789abcdef0123", "vcs.time", "2026-11-30T10:00:00Z", "vcs.modified", "true")},
			Info{Version: "dev", Commit: "0123456789ab", Date: "2026-11-30T10:00:00Z", Modified: true}},
		{"go install @commit (pseudo-version)", Info{},
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201203015-40a1afc0d1e2"}},
			Info{Version: "v0.0.0-20261201203015-40a1afc0d1e2", Commit: "40a1afc0d1e2", Date: "2026-12-01T20:30:15Z"}},
		{"pseudo-version after a pre-release, +dirty", Info{},
			&debug.BuildInfo{Main: debug.Module{Version: "v1.3.0-rc.1.0.20261201203015-40a1afc0d1e2+dirty"}},
			Info{Version: "v1.3.0-rc.1.0.20261201203015-40a1afc0d1e2+dirty", Commit: "40a1afc0d1e2", Date: "2026-12-01T20:30:15Z"}},
		{"go install @v1.2.3 (a tag: no commit recorded)", Info{},
			&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}},
			Info{Version: "v1.2.3", Commit: Unknown, Date: Unknown}},
		{"no build info", Info{}, nil, Info{Version: "dev", Commit: Unknown, Date: Unknown}},
		{"make build without git, go install'd module: its version fills the placeholders",
			Info{Version: "dev", Commit: "none", Date: Unknown},
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201203015-40a1afc0d1e2"}},
			Info{Version: "v0.0.0-20261201203015-40a1afc0d1e2", Commit: "40a1afc0d1e2", Date: "2026-12-01T20:30:15Z"}},
		{"make build without git, VCS settings recorded", Info{Version: "dev", Commit: "none", Date: Unknown},
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: settings(
				"vcs.revision", "0123456789abcdef0123", "vcs.time", "2026-11-30T10:00:00Z")},
			Info{Version: "dev", Commit: "0123456789ab", Date: "2026-11-30T10:00:00Z"}},
		{"tagged module, placeholders stamped", Info{Version: "dev", Commit: "none", Date: Unknown},
			&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}},
			Info{Version: "v1.2.3", Commit: Unknown, Date: Unknown}},
		{"placeholders and nothing recorded", Info{Version: "dev", Commit: "none", Date: Unknown},
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			Info{Version: "dev", Commit: Unknown, Date: Unknown}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fill(tc.stamped, tc.bi); got != tc.want {
				t.Errorf("fill = %+v, want %+v", got, tc.want)
			}
		})
	}
}
