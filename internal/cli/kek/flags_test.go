package kek_test

import (
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/kek"
	"github.com/hubctl/hubctl/internal/cli/output"
)

func TestReencryptParsesItsFlagsWithoutAHub(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    kek.ReencryptOptions
		wantErr string
	}{
		{args: nil, want: kek.ReencryptOptions{Format: output.JSON, BatchSize: 500}},
		{args: []string{"--dry-run", "--batch-size", "50", "-o", "yaml"}, want: kek.ReencryptOptions{Format: output.YAML, DryRun: true, BatchSize: 50}},
		{args: []string{"--batch-size", "0"}, wantErr: "invalid --batch-size 0"},
		{args: []string{"--batch-size", "10001"}, wantErr: "invalid --batch-size 10001"},
		{args: []string{"-o", "xml"}, wantErr: "xml"},
		{args: []string{"everything"}, wantErr: "unknown command"},
	} {
		var got *kek.ReencryptOptions
		f, _, _, _ := cmdtest.Factory(nil)
		err := cmdtest.Exec(t, f, kek.NewCmdReencrypt(f, func(o *kek.ReencryptOptions) error { got = o; return nil }), tc.args...)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || got != nil {
				t.Errorf("%q: err %v, ran %v; want an error with %q and no run", tc.args, err, got != nil, tc.wantErr)
			}
			continue
		}
		if err != nil || got == nil {
			t.Fatalf("%q: err %v, ran %v", tc.args, err, got != nil)
		}
		tc.want.Factory = f
		if *got != tc.want {
			t.Errorf("%q: options %+v, want %+v", tc.args, *got, tc.want)
		}
	}
}

func TestStatusParsesItsFlagsWithoutAHub(t *testing.T) {
	var got *kek.StatusOptions
	f, _, _, _ := cmdtest.Factory(nil)
	if err := cmdtest.Exec(t, f, kek.NewCmdStatus(f, func(o *kek.StatusOptions) error { got = o; return nil }), "-o", "table"); err != nil || got == nil {
		t.Fatalf("err %v, ran %v", err, got != nil)
	}
	if got.Format != output.Table || got.Factory != f {
		t.Errorf("options %+v", *got)
	}
}
