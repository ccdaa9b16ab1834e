package subs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/subs"
)

func TestCreateSendsTheFilter(t *testing.T) {
	f, _, _, _ := cmdtest.Factory(nil)
	var got *subs.CreateOptions
	err := cmdtest.Exec(t, f, subs.NewCmdCreate(f, func(o *subs.CreateOptions) error { got = o; return nil }),
		"--name", "big", "--type", "pull", "--filter", "data.amount > 100")
	if err != nil || got == nil || got.Body.Filter == nil || *got.Body.Filter != "data.amount > 100" {
		t.Fatalf("err %v, options %+v", err, got)
	}
}

const testEvent = `{"specversion":"1.0","id":"01890a5d-ac96-774b-bcce-b302099a8057","source":"midaz","type":"studio.lerian.transaction.posted",
"time":"2026-12-01T12:00:00Z","subject":"acct-42","schemaversion":"1.0.0","resourcetype":"transaction","eventtype":"posted",
"tenantid":"acme","datacontenttype":"application/json","data":{"amount":150}}`

func TestTestFilter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(path, []byte(testEvent), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		stdin    string
		code     int
		out      string
		errorHas string
	}{
		{"match from a file", []string{"--filter", `type == "transaction.posted" && data.amount > 100 && tenant_id == "acme"`, "--event", "@" + path}, "", 0, "match\n", ""},
		{"match from stdin", []string{"--filter", `subject.startsWith("acct-") && time > timestamp("2026-01-01T00:00:00Z")`, "--event", "-"}, testEvent, 0, "match\n", ""},
		{"no match", []string{"--filter", `data.amount < 100`, "--event", "@" + path}, "", 1, "no match\n", ""},
		{"evaluation error", []string{"--filter", `data.missing == 1`, "--event", "@" + path}, "", 1, "no match: no such key: missing\n", ""},
		{"refused filter", []string{"--filter", `data.amount >`, "--event", "@" + path}, "", 2, "", "line 1, column 14"},
		{"filter missing", []string{"--event", "@" + path}, "", 2, "", "required"},
		{"misspelt attribute", []string{"--filter", "true", "--event", "-"}, `{"subjekt":"x"}`, 2, "", "subjekt"},
		{"not a file argument", []string{"--filter", "true", "--event", "event.json"}, "", 2, "", "@FILE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, stdin, stdout, _ := cmdtest.Factory(nil)
			stdin.WriteString(tc.stdin)
			err := cmdtest.Exec(t, f, subs.NewCmdTestFilter(f, nil), tc.args...)
			if code := cmdutil.ExitCode(err); code != tc.code {
				t.Fatalf("exit code %d (%v), want %d", code, err, tc.code)
			}
			if stdout.String() != tc.out {
				t.Errorf("stdout %q, want %q", stdout.String(), tc.out)
			}
			if tc.errorHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errorHas)) {
				t.Errorf("error %v does not mention %q", err, tc.errorHas)
			}
			var exit *cmdutil.ExitError
			if tc.code == 1 && (!errors.As(err, &exit) || !exit.Silent) {
				t.Errorf("a non-match should exit quietly after its own output, got %v", err)
			}
		})
	}
}
