package sig

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
)

func TestSignRefusesBadFlagsBeforeReadingTheBody(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--secret", ""},
		{"--secret", "whsec_x", "--timestamp", "-1"},
	} {
		f, _, _, _ := cmdtest.Factory(nil)
		err := cmdtest.Exec(t, f, NewCmdSign(f, func(*SignOptions) error { t.Errorf("%q ran", args); return nil }), args...)
		if cmdutil.ExitCode(err) != cmdutil.ExitUsage {
			t.Errorf("%q: exit %d, want usage", args, cmdutil.ExitCode(err))
		}
	}
	f, _, _, _ := cmdtest.Factory(nil)
	var got *SignOptions
	before := time.Now().Unix()
	if err := cmdtest.Exec(t, f, NewCmdSign(f, func(o *SignOptions) error { got = o; return nil }), "--secret", "a", "--secret", "b"); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Secrets, []string{"a", "b"}) || got.Timestamp < before {
		t.Errorf("options %+v: want both secrets in order and the timestamp defaulting to now", got)
	}
}

func TestVerifyGathersSignatureHeadersFromFlagsAndAHeaderFile(t *testing.T) {
	dir := t.TempDir()
	headers := filepath.Join(dir, "headers.txt")
	block := "POST /hook HTTP/1.1\r\nX-Webhook-Timestamp: 1767225600\r\nX-Webhook-Signature: v1,sha256=aa\r\nX-Webhook-Signature: v1,sha256=bb\r\n\r\nbody"
	if err := os.WriteFile(headers, []byte(block), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		args      []string
		wantTS    string
		wantSigs  []string
		wantUsage bool
	}{
		{name: "flags", args: []string{"--secret", "s", "--timestamp", "1", "--signature", "v1,sha256=cc"}, wantTS: "1", wantSigs: []string{"v1,sha256=cc"}},
		{name: "header file, flag adds", args: []string{"--secret", "s", "--headers-file", headers, "--signature", "v1,sha256=cc"},
			wantTS: "1767225600", wantSigs: []string{"v1,sha256=aa", "v1,sha256=bb", "v1,sha256=cc"}},
		{name: "timestamp flag overrides the file", args: []string{"--secret", "s", "--headers-file", headers, "--timestamp", "7"},
			wantTS: "7", wantSigs: []string{"v1,sha256=aa", "v1,sha256=bb"}},
		{name: "no timestamp", args: []string{"--secret", "s", "--signature", "v1,sha256=cc"}, wantUsage: true},
		{name: "no signature", args: []string{"--secret", "s", "--timestamp", "1"}, wantUsage: true},
		{name: "no secret", args: []string{"--timestamp", "1", "--signature", "v1,sha256=cc"}, wantUsage: true},
		{name: "zero tolerance", args: []string{"--secret", "s", "--timestamp", "1", "--signature", "x", "--tolerance", "0s"}, wantUsage: true},
	} {
		f, _, _, _ := cmdtest.Factory(nil)
		var got *VerifyOptions
		err := cmdtest.Exec(t, f, NewCmdVerify(f, func(o *VerifyOptions) error { got = o; return nil }), tc.args...)
		if tc.wantUsage {
			if cmdutil.ExitCode(err) != cmdutil.ExitUsage || got != nil {
				t.Errorf("%s: exit %d, ran %v; want a usage error first", tc.name, cmdutil.ExitCode(err), got != nil)
			}
			continue
		}
		if err != nil || got == nil {
			t.Fatalf("%s: err %v", tc.name, err)
		}
		if got.Timestamp != tc.wantTS || !reflect.DeepEqual(got.Signatures, tc.wantSigs) {
			t.Errorf("%s: timestamp %q signatures %q; want %q %q", tc.name, got.Timestamp, got.Signatures, tc.wantTS, tc.wantSigs)
		}
	}
}
