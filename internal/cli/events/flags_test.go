package events

import (
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
)

func TestProduceChecksEverythingBeforeKafka(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		stdin   string
		wantErr string
		check   func(t *testing.T, o *ProduceOptions)
	}{
		{
			args: []string{"--tenant", "acme", "--type", "balance.config-changed"},
			check: func(t *testing.T, o *ProduceOptions) {
				if o.Many || o.Count != 1 || o.tmpl.topic != "lerian.streaming.midaz_balance.config_changed" || o.tmpl.tenant != "acme" {
					t.Errorf("options %+v", o)
				}
			},
		},
		{
			args:  []string{"--tenant", "acme", "--type", "account.created", "--data", "-", "--count", "3", "--topic", "t1"},
			stdin: `{"id": 7}`,
			check: func(t *testing.T, o *ProduceOptions) {
				if !o.Many || o.Count != 3 || o.tmpl.topic != "t1" || string(o.tmpl.data) != `{"id": 7}` {
					t.Errorf("options %+v", o)
				}
			},
		},
		{args: []string{"--type", "a.b"}, wantErr: "missing --tenant"},
		{args: []string{"--tenant", "acme", "--type", "a.b", "--count", "0"}, wantErr: "invalid --count 0"},
		{args: []string{"--tenant", "acme", "--type", "a.b", "--data", "{"}, wantErr: "JSON"},
		{args: []string{"--tenant", "acme", "--type", "nodot"}, wantErr: "nodot"},
	} {
		f, stdin, _, _ := cmdtest.Factory(map[string]string{envBrokers: "127.0.0.1:1"})
		stdin.WriteString(tc.stdin)
		var got *ProduceOptions
		err := cmdtest.Exec(t, f, NewCmdProduce(f, func(o *ProduceOptions) error { got = o; return nil }), tc.args...)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || got != nil || cmdutil.ExitCode(err) != cmdutil.ExitUsage {
				t.Errorf("%q: err %v (exit %d), ran %v; want exit 2 with %q", tc.args, err, cmdutil.ExitCode(err), got != nil, tc.wantErr)
			}
			continue
		}
		if err != nil || got == nil {
			t.Fatalf("%q: err %v, ran %v", tc.args, err, got != nil)
		}
		tc.check(t, got)
	}
}
