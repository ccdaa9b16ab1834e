// The receiver examples of docs/consuming.md, run: each one is started as
// the page says and checked by receivertest, and the page must show each
// file exactly as it is here, so what a reader copies is what was tested.
package examples_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli"
	"github.com/hubctl/hubctl/internal/freeport"
	"github.com/hubctl/hubctl/internal/testutil/receivertest"
	"github.com/hubctl/hubctl/internal/testutil/syncbuf"
	"github.com/hubctl/hubctl/pkg/webhook"
)

const consumingPage = "../consuming.md"

// asHubctl makes this test binary act as hubctl, so the page's shell lines
// run a real `hubctl` from PATH without a separate build.
const asHubctl = "HUBCTL_EXAMPLES_RUN_AS_HUBCTL"

func TestMain(m *testing.M) {
	if os.Getenv(asHubctl) == "1" {
		os.Exit(cli.Main())
	}
	os.Exit(m.Run())
}

func TestPageShowsEachExampleAsTested(t *testing.T) {
	blocks := fencedBlocks(t, readPage(t))
	for _, file := range []string{"go-receiver/main.go", "receiver.py", "receiver.js", "consumers/nats/main.go", "consumers/kafka/main.go", "consumers/s3/main.go", "consumers/pubsub/main.go"} {
		content, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, b := range blocks {
			found = found || b.body == string(content)
		}
		if !found {
			t.Errorf("docs/consuming.md has no code block equal to docs/examples/%s: paste the file into the page again", file)
		}
	}
}

func TestPythonReceiver(t *testing.T) {
	runReceiver(t, "python3", "receiver.py")
}

func TestNodeReceiver(t *testing.T) {
	runReceiver(t, "node", "receiver.js")
}

// runReceiver starts a receiver script with its runtime, as the page
// shows, and runs the receiver checks against it.
func runReceiver(t *testing.T, runtime, script string) {
	path, err := exec.LookPath(runtime)
	if err != nil {
		t.Skipf("%s is not installed, so docs/examples/%s is not run here", runtime, script)
	}
	ports, err := freeport.Pick(1)
	if err != nil {
		t.Fatal(err)
	}
	port := ports[0]
	cmd := exec.Command(path, script)
	cmd.Env = append(os.Environ(), "WEBHOOK_SECRETS="+receivertest.Secrets, "PORT="+strconv.Itoa(port))
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	waitListening(t, addr, &out)
	receivertest.Check(t, "http://"+addr+"/hooks/hubctl", out.String)
}

// TestShellVerification runs the page's `hubctl sig verify` line in sh on a
// captured delivery, then on the same delivery with its body changed.
func TestShellVerification(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on this machine, so the shell example is not run here")
	}
	line := shellExample(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(bin, "hubctl")); err != nil {
		t.Fatal(err)
	}

	// The headers of a delivery as a receiver would capture them.
	body := []byte(`{"amount":1000}`)
	now := time.Now().Unix()
	header := "POST /hooks/hubctl HTTP/1.1\r\nHost: receiver.example\r\nContent-Type: application/json\r\n"
	header += fmt.Sprintf("%s: %d\r\n", webhook.HeaderTimestamp, now)
	for _, sig := range webhook.SignAll([]string{receivertest.CurrentSecret}, now, body) {
		header += webhook.HeaderSignature + ": " + sig + "\r\n"
	}
	header += "\r\n"
	write(t, filepath.Join(dir, "headers.txt"), header)

	run := func(body string) (string, string, int) {
		write(t, filepath.Join(dir, "body.json"), body)
		cmd := exec.Command(sh, "-c", line)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), asHubctl+"=1", "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
			"WEBHOOK_SECRET="+receivertest.CurrentSecret)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if exitErr, ok := err.(*exec.ExitError); ok {
			code = exitErr.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return stdout.String(), stderr.String(), code
	}

	if stdout, stderr, code := run(string(body)); code != 0 || strings.TrimSpace(stdout) != "verified" {
		t.Errorf("authentic delivery: exit %d, stdout %q, stderr %q; want exit 0 and \"verified\"", code, stdout, stderr)
	}
	if stdout, stderr, code := run(`{"amount":9000}`); code != 1 || stdout != "" || !strings.Contains(stderr, "signature_mismatch") {
		t.Errorf("tampered delivery: exit %d, stdout %q, stderr %q; want exit 1 naming signature_mismatch", code, stdout, stderr)
	}
}

// shellExample is the one sh block of the page that runs hubctl sig verify.
func shellExample(t *testing.T) string {
	t.Helper()
	var lines []string
	for _, b := range fencedBlocks(t, readPage(t)) {
		if b.lang == "sh" && strings.Contains(b.body, "hubctl sig verify") {
			lines = append(lines, strings.TrimSpace(b.body))
		}
	}
	if len(lines) != 1 {
		t.Fatalf("docs/consuming.md has %d sh blocks running hubctl sig verify; this test runs exactly one", len(lines))
	}
	if strings.Contains(lines[0], "\n") {
		t.Fatalf("the sh example should be one line, it is:\n%s", lines[0])
	}
	return lines[0]
}

type block struct{ lang, body string }

var fence = regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```$")

func fencedBlocks(t *testing.T, page string) []block {
	t.Helper()
	var blocks []block
	for _, m := range fence.FindAllStringSubmatch(page, -1) {
		blocks = append(blocks, block{lang: m[1], body: m[2]})
	}
	if len(blocks) == 0 {
		t.Fatal("docs/consuming.md has no code blocks")
	}
	return blocks
}

func readPage(t *testing.T) string {
	t.Helper()
	page, err := os.ReadFile(consumingPage)
	if err != nil {
		t.Fatal(err)
	}
	return string(page)
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func waitListening(t *testing.T, addr string, out *syncbuf.Buffer) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver did not listen on %s: %v\noutput:\n%s", addr, err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
