package dlq_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/dlq"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestListRepeatsItsSelectionInTheNextPageHint(t *testing.T) {
	f, _, _, _ := cmdtest.Factory(nil)
	var got *dlq.ListOptions
	cmd := dlq.NewCmdList(f, func(o *dlq.ListOptions) error { got = o; return nil })
	err := cmdtest.Exec(t, f, cmd, "--reason", "exhausted", "--since", "2026-12-01T00:00:00Z", "--limit", "3", "--cursor", "c")
	if err != nil || got == nil {
		t.Fatalf("err %v, ran %v", err, got != nil)
	}
	want := hubapi.DeadLetterListParams{
		ListParams:       hubapi.ListParams{Limit: 3, Cursor: "c"},
		DeadLetterFilter: hubapi.DeadLetterFilter{Reason: "exhausted", Since: "2026-12-01T00:00:00Z"},
	}
	if got.Params != want {
		t.Errorf("params %+v, want %+v", got.Params, want)
	}
	for _, part := range []string{"--reason exhausted", "--since 2026-12-01T00:00:00Z", "--limit 3"} {
		if !strings.Contains(got.Next, part) {
			t.Errorf("next-page hint %q lacks %q", got.Next, part)
		}
	}
	if strings.Contains(got.Next, "--cursor") {
		t.Errorf("next-page hint %q repeats the cursor", got.Next)
	}
	if err := cmdtest.Exec(t, f, dlq.NewCmdList(f, func(*dlq.ListOptions) error { t.Error("ran"); return nil }), "--limit", "100000"); err == nil {
		t.Error("--limit 100000 accepted")
	}
}

func TestReplayParsesItsSelection(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want dlq.ReplayOptions
	}{
		{args: []string{"--id", "a", "--id", "b"}, want: dlq.ReplayOptions{IDs: []string{"a", "b"}}},
		{args: []string{"--subscription", "s1", "--until", "2026-12-02T00:00:00Z", "--dry-run"},
			want: dlq.ReplayOptions{Filter: hubapi.DeadLetterFilter{SubscriptionID: "s1", Until: "2026-12-02T00:00:00Z"}, DryRun: true}},
		{args: []string{"--reason", "poison", "--yes", "-o", "yaml"},
			want: dlq.ReplayOptions{Filter: hubapi.DeadLetterFilter{Reason: "poison"}, Yes: true, Format: "yaml"}},
	} {
		f, _, _, _ := cmdtest.Factory(nil)
		var got *dlq.ReplayOptions
		if err := cmdtest.Exec(t, f, dlq.NewCmdReplay(f, func(o *dlq.ReplayOptions) error { got = o; return nil }), tc.args...); err != nil || got == nil {
			t.Fatalf("%q: err %v, ran %v", tc.args, err, got != nil)
		}
		tc.want.Factory = f
		if tc.want.Format == "" {
			tc.want.Format = "json"
		}
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("%q: options %+v, want %+v", tc.args, *got, tc.want)
		}
	}
}
