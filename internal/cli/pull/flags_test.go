package pull_test

import (
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/cli/pull"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestPullParsesItsFlagsWithoutAHub(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		format    output.Format
		limit     int
		after     *int64
		follow    bool
		wantErr   string
		wantUsage bool
	}{
		// Not a terminal: the default is one JSON object per line.
		{args: []string{"s1"}, format: output.JSONL, limit: hubapi.DefaultPageLimit},
		{args: []string{"s1", "-f", "--after", "0", "--limit", "9", "-o", "table"}, format: output.Table, limit: 9, after: new(int64), follow: true},
		{args: []string{"s1", "--after", "-1"}, wantErr: "invalid --after -1", wantUsage: true},
		{args: []string{"s1", "-o", "yaml"}, wantErr: "yaml", wantUsage: true},
		{args: []string{"s1", "--limit", "0"}, wantErr: "invalid --limit", wantUsage: true},
		{args: nil, wantErr: "accepts 1 arg"},
	} {
		f, _, _, _ := cmdtest.Factory(nil)
		var got *pull.Options
		err := cmdtest.Exec(t, f, pull.NewCmd(f, func(o *pull.Options) error { got = o; return nil }), tc.args...)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || got != nil ||
				tc.wantUsage && cmdutil.ExitCode(err) != cmdutil.ExitUsage {
				t.Errorf("%q: err %v (exit %d), ran %v; want %q", tc.args, err, cmdutil.ExitCode(err), got != nil, tc.wantErr)
			}
			continue
		}
		if err != nil || got == nil {
			t.Fatalf("%q: err %v, ran %v", tc.args, err, got != nil)
		}
		p := got.Pull
		if got.ID != "s1" || got.Format != tc.format || p.Limit != tc.limit || p.Follow != tc.follow ||
			(p.After == nil) != (tc.after == nil) || p.After != nil && *p.After != *tc.after || p.Retryable == nil {
			t.Errorf("%q: options %+v, pull %+v", tc.args, got, p)
		}
	}
}
