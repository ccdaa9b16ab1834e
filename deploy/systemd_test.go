package deploy_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hubctl/hubctl/internal/config"
)

const (
	unitFile = "systemd/hubctl.service"
	envFile  = "systemd/hubctl.env"
)

// envAssignment is one NAME=value line, commented out or not.
var envAssignment = regexp.MustCompile(`^(#?)([A-Z][A-Z0-9_]*)=(.*)$`)

// TestEnvFileSettings: every setting the env file names, set or suggested in
// a comment, is one hubctl knows, and hubctl accepts the file with every
// suggestion taken and the secrets filled in.
func TestEnvFileSettings(t *testing.T) {
	f, err := os.Open(envFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	known := map[string]bool{}
	for _, s := range config.Settings() {
		known[s.Env] = true
	}
	env := map[string]string{}
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		m := envAssignment.FindStringSubmatch(scanner.Text())
		if m == nil {
			continue
		}
		name, value := m[2], m[3]
		if strings.HasPrefix(name, config.EnvPrefix) && !known[name] {
			t.Errorf("%s names %s, which is not a hubctl setting", envFile, name)
		}
		if m[1] == "" && strings.ContainsAny(value, `"'$\`) {
			t.Errorf("%s: %s needs quoting or expansion, which systemd and sh read differently", envFile, name)
		}
		env[name] = value
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	ref := env["STREAMING_HUB_KEK_REF"]
	if _, ok := env[ref]; ref == "" || !ok {
		t.Fatalf("%s: STREAMING_HUB_KEK_REF=%q names no variable the file defines", envFile, ref)
	}
	env[ref] = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	env["STREAMING_HUB_ADMIN_TOKEN"] = "an-admin-token-of-enough-length"
	env["STREAMING_HUB_KAFKA_SASL_PASSWORD"] = "sasl-password"
	if _, err := config.Load(config.LoadOptions{LookupEnv: mapEnv(env)}); err != nil {
		t.Errorf("hubctl refuses %s: %v", envFile, err)
	}
}

// TestUnitMatchesThePackages: the unit reads the env file where the
// packages put it, runs the binary where they put it, and gives the
// shutdown timeout room before SIGKILL.
func TestUnitMatchesThePackages(t *testing.T) {
	unit := readUnit(t)
	var release struct {
		NFPMs []struct {
			Bindir   string `yaml:"bindir"`
			Contents []struct {
				Src, Dst, Type string
				FileInfo       struct {
					Mode int `yaml:"mode"`
				} `yaml:"file_info"`
			} `yaml:"contents"`
		} `yaml:"nfpms"`
	}
	raw, err := os.ReadFile("../goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &release); err != nil {
		t.Fatal(err)
	}
	if len(release.NFPMs) != 1 {
		t.Fatalf("goreleaser.yaml has %d nfpms entries, want 1", len(release.NFPMs))
	}
	pkg := release.NFPMs[0]
	installed := map[string]string{} // src → dst
	for _, c := range pkg.Contents {
		installed[filepath.Clean(c.Src)] = c.Dst
		if c.Src == "./"+envFile || c.Src == "./deploy/"+envFile {
			if c.Type != "config|noreplace" || c.FileInfo.Mode != 0o600 {
				t.Errorf("the env file is packaged as %q mode %o; it holds secrets and the operator's edits: config|noreplace, 0600", c.Type, c.FileInfo.Mode)
			}
		}
	}
	if dst := installed["deploy/"+unitFile]; dst != "/usr/lib/systemd/system/hubctl.service" {
		t.Errorf("the packages install the unit at %q", dst)
	}
	if dst := installed["deploy/"+envFile]; dst != unit["EnvironmentFile"] {
		t.Errorf("the packages install the env file at %q, the unit reads %q", dst, unit["EnvironmentFile"])
	}
	if exec := unit["ExecStart"]; exec != pkg.Bindir+"/hubctl serve" {
		t.Errorf("ExecStart=%q; the packages install the binary in %s", exec, pkg.Bindir)
	}
	stop, err := time.ParseDuration(unit["TimeoutStopSec"])
	if err != nil {
		t.Fatalf("TimeoutStopSec=%q: %v", unit["TimeoutStopSec"], err)
	}
	if shutdown := defaultOf(t, "STREAMING_HUB_SHUTDOWN_TIMEOUT"); stop <= shutdown {
		t.Errorf("TimeoutStopSec=%s leaves no room after the %s shutdown timeout", stop, shutdown)
	}
	if unit["RestartPreventExitStatus"] != "2" {
		t.Errorf("RestartPreventExitStatus=%q; a bad setting (exit 2) must not restart in a loop", unit["RestartPreventExitStatus"])
	}
}

// TestUnitVerifies runs systemd-analyze verify where it exists. The binary
// and its man page are not installed on a build machine; those two
// complaints are expected, any other is a defect of the unit.
func TestUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed, so the unit is not verified here")
	}
	out, _ := exec.Command(analyze, "verify", unitFile).CombinedOutput()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		switch {
		case line == "":
		case strings.Contains(line, "/usr/bin/hubctl is not executable"):
		case strings.Contains(line, "man hubctl-serve(1)"):
		default:
			t.Errorf("systemd-analyze verify: %s", line)
		}
	}
	if _, err := os.Stat("../man/hubctl-serve.1"); err != nil {
		t.Errorf("the unit's Documentation names hubctl-serve(1), which make docs no longer makes: %v", err)
	}
}

// readUnit returns the unit's last value of each key.
func readUnit(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			keys[k] = v
		}
	}
	return keys
}

func defaultOf(t *testing.T, env string) time.Duration {
	t.Helper()
	for _, s := range config.Settings() {
		if s.Env == env {
			d, err := time.ParseDuration(s.Default)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	t.Fatalf("no setting %s", env)
	return 0
}
