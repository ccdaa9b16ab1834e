// Package buildinfo carries what the linker stamps into a release build
// (see the Makefile and goreleaser.yaml). Development builds fall back to the
// module information the Go toolchain records.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Set with -ldflags "-X github.com/hubctl/hubctl/internal/buildinfo.Version=…".
var (
	Version = ""
	Commit  = ""
	Date    = ""
)

// Info is the build's identity, as `hubctl version` and /version show it.
type Info struct {
	Version   string `json:"version" yaml:"version"`
	Commit    string `json:"commit" yaml:"commit"`
	Date      string `json:"date" yaml:"date"`
	GoVersion string `json:"go_version" yaml:"go_version"`
	Platform  string `json:"platform" yaml:"platform"`
}

// Get returns the stamped values, filling gaps from the toolchain's record of
// the build so `go run` and `go install` builds still say something true.
func Get() Info {
	info := Info{Version: Version, Commit: Commit, Date: Date, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && info.Commit == "":
				info.Commit = s.Value
				if len(info.Commit) > 12 {
					info.Commit = info.Commit[:12]
				}
			case s.Key == "vcs.time" && info.Date == "":
				info.Date = s.Value
			}
		}
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	if info.Commit == "" {
		info.Commit = "none"
	}
	if info.Date == "" {
		info.Date = "unknown"
	}
	return info
}

// UserAgent is the User-Agent of every outbound request: hubctl/<version>.
func UserAgent() string { return "hubctl/" + Get().Version }
