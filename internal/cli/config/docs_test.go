package config_test

import (
	"bytes"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/config"
)

// The reference needs no configuration: a broken environment still gets it.
func TestDocsPrintsTheReferenceWhateverTheEnvironment(t *testing.T) {
	var want bytes.Buffer
	if err := config.WriteReference(&want); err != nil {
		t.Fatal(err)
	}
	res := clitest.Run(t, map[string]string{"STREAMING_HUB_DISPATCH_WORKERS": "0"}, "config", "docs")
	if res.Code != 0 || res.Stdout != want.String() || res.Stderr != "" {
		t.Errorf("config docs = exit %d, stderr %q, stdout equal to the reference: %v", res.Code, res.Stderr, res.Stdout == want.String())
	}
}
