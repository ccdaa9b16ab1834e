// Package buildinfo carries what the linker stamps into a release build
// (see the Makefile and goreleaser.yaml). Other builds fall back to what the
// Go toolchain records: the VCS stamp of a build in a checkout, and the
// module version of `go install …@version`, whose pseudo-versions carry the
// commit and its time.
package buildinfo

import (
	"regexp"
	"runtime"
	"runtime/debug"
	"time"
)

// Set with -ldflags "-X github.com/hubctl/hubctl/internal/buildinfo.Version=…".
var (
	Version = ""
	Commit  = ""
	Date    = ""
)

// Unknown is what Commit and Date read when no build record says.
const Unknown = "unknown"

// Info is the build's identity, as `hubctl version` and /version show it.
type Info struct {
	Version string `json:"version" yaml:"version"`
	Commit  string `json:"commit" yaml:"commit"`
	Date    string `json:"date" yaml:"date"`
	// Modified says the build's checkout had uncommitted changes.
	Modified  bool   `json:"modified,omitempty" yaml:"modified,omitempty"`
	GoVersion string `json:"go_version" yaml:"go_version"`
	Platform  string `json:"platform" yaml:"platform"`
}

// Get returns the stamped values, filling gaps from the toolchain's record of
// the build so `go run` and `go install` builds still say something true.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	info := fill(Info{Version: Version, Commit: Commit, Date: Date}, bi)
	info.GoVersion, info.Platform = runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH
	return info
}

// pseudoVersion matches the tail of a Go pseudo-version,
// vX.Y.Z-[pre.0.]yyyymmddhhmmss-abcdefabcdef, optionally +incompatible or
// +dirty.
var pseudoVersion = regexp.MustCompile(`[-.](\d{14})-([0-9a-f]{12})(\+[a-z]+)*$`)

// placeholders are what the Makefile and the Dockerfile stamp when they
// cannot ask git (a source tarball, a build with VCS stamping off): they
// say nothing, so the toolchain's record may still say something true.
var placeholders = map[string]bool{"dev": true, "none": true, Unknown: true}

// fill completes the stamped values from bi, which may be nil.
func fill(info Info, bi *debug.BuildInfo) Info {
	for _, v := range []*string{&info.Version, &info.Commit, &info.Date} {
		if placeholders[*v] {
			*v = ""
		}
	}
	if bi != nil {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && info.Commit == "":
				info.Commit = shortCommit(s.Value)
			case s.Key == "vcs.time" && info.Date == "":
				info.Date = s.Value
			case s.Key == "vcs.modified" && s.Value == "true":
				info.Modified = true
			}
		}
		if m := pseudoVersion.FindStringSubmatch(bi.Main.Version); m != nil {
			if info.Commit == "" {
				info.Commit = m[2]
			}
			if t, err := time.Parse("20060102150405", m[1]); err == nil && info.Date == "" {
				info.Date = t.UTC().Format(time.RFC3339)
			}
		}
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	if info.Commit == "" {
		info.Commit = Unknown
	}
	if info.Date == "" {
		info.Date = Unknown
	}
	return info
}

func shortCommit(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// UserAgent is the User-Agent of every outbound request: hubctl/<version>.
func UserAgent() string { return "hubctl/" + Get().Version }
