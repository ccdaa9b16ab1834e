package listen

import (
	"bytes"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
)

func TestReceiverJQFiltersEachRequest(t *testing.T) {
	opts := options{secrets: []string{testSecret}, format: formatText, status: 500, jq: `.event_id + " " + (.body.amount|tostring)`}
	if err := opts.compileJQ(false); err != nil {
		t.Fatal(err)
	}
	if opts.format != formatJSON {
		t.Errorf("--jq leaves the format %q, want json", opts.format)
	}
	var out bytes.Buffer
	rc := newReceiver(opts, &out, func() time.Time { return testNow }, func() float64 { return 0 })
	rc.ServeHTTP(httptest.NewRecorder(), signed(testSecret, "transaction.posted", "ev-1", "del-1", `{"amount":1000}`))
	rc.ServeHTTP(httptest.NewRecorder(), signed(testSecret, "transaction.posted", "ev-2", "del-2", `{"amount":7}`))
	if got, want := out.String(), "ev-1 1000\nev-2 7\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
}

func TestListenJQFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		name          string
		opts          options
		outputChanged bool
	}{
		{"with -o text", options{format: formatText, jq: ".id"}, true},
		{"invalid expression", options{format: formatJSON, jq: ".["}, false},
	} {
		err := tc.opts.compileJQ(tc.outputChanged)
		var coded *cmdutil.ExitError
		if !errors.As(err, &coded) || coded.Code != cmdutil.ExitUsage {
			t.Errorf("%s: err = %v, want a usage error", tc.name, err)
		}
	}
	ok := options{format: formatJSON, jq: ".id"}
	if err := ok.compileJQ(true); err != nil {
		t.Errorf("--jq with -o json: %v", err)
	}
}
