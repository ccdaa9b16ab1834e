//go:build linux

package chaos

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/freeport"
)

// TestDuplicateInstanceIDIsFenced starts a second `hubctl serve` with the
// instance id of a running one, as a copy-pasted configuration would: the
// first is fenced, says so in one log line and answers /readyz 503 from
// then on, while the second ingests and delivers everything, once.
func TestDuplicateInstanceIDIsFenced(t *testing.T) {
	prelude(t)
	w := newWorld(t, worldOptions{instanceID: staticID})
	time.Sleep(time.Second)

	ports, err := freeport.Pick(1)
	if err != nil {
		t.Fatal(err)
	}
	secondAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	env := append(slices.DeleteFunc(slices.Clone(w.env), func(kv string) bool {
		return strings.HasPrefix(kv, "STREAMING_HUB_HTTP_LISTEN_ADDR=")
	}), "STREAMING_HUB_HTTP_LISTEN_ADDR="+secondAddr)
	secondLog, err := os.Create(filepath.Join(w.dir, "second.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer secondLog.Close()
	second, secondExit := w.spawn(hubctl(t), env, secondLog)
	defer func() {
		_ = second.Process.Signal(syscall.SIGKILL)
		<-secondExit
	}()

	w.waitFor("the second hub to be ready", func() bool { return readyAt(secondAddr) })
	w.waitFor("the first hub to answer /readyz 503", func() bool { return !w.ready() })
	// Long enough for franz-go to rejoin and fail again had the fenced
	// member not stopped; /readyz must stay 503 and nothing more be said.
	time.Sleep(3 * time.Second)
	if w.ready() {
		t.Error("the fenced hub answers /readyz 200 again")
	}
	log, err := os.ReadFile(w.hubLog.Name())
	if err != nil {
		t.Fatal(err)
	}
	var fenced []string
	for line := range strings.SplitSeq(string(log), "\n") {
		if strings.Contains(strings.ToLower(line), "fenced") && !strings.Contains(line, `"msg":"http request"`) {
			fenced = append(fenced, line)
		}
	}
	if len(fenced) != 1 || !strings.Contains(fenced[0], `"level":"ERROR"`) {
		t.Errorf("the fenced hub logged %d lines about fencing, want one ERROR:\n%s", len(fenced), strings.Join(fenced, "\n"))
	}
	if n := strings.Count(string(log), `"level":"WARN","msg":"unable to commit`); n > 0 {
		t.Errorf("the fenced hub logged %d failed commits besides saying it was fenced", n)
	}

	// The second hub ingests what is produced from now on, and all of it
	// once; the first one, still running, stores nothing.
	r := report{}
	r.line("scenario duplicate instance id: the first hub fenced, the second took over")
	r.verdict(w.settle(nil))
	t.Log("\n" + r.b.String())
}
