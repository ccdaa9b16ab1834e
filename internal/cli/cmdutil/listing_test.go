package cmdutil

import (
	"testing"

	"github.com/hubctl/hubctl/pkg/hubapi"
	"github.com/spf13/cobra"
)

func TestCheckLimit(t *testing.T) {
	tests := []struct {
		limit   int
		wantErr string
	}{
		{1, ""},
		{hubapi.MaxPageLimit, ""},
		{0, "invalid --limit 0: must be between 1 and 1000"},
		{-3, "invalid --limit -3: must be between 1 and 1000"},
		{hubapi.MaxPageLimit + 1, "invalid --limit 1001: must be between 1 and 1000"},
	}
	for _, tt := range tests {
		err := CheckLimit(tt.limit)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("CheckLimit(%d) = %v, want nil", tt.limit, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.wantErr || ExitCode(err) != ExitUsage {
			t.Errorf("CheckLimit(%d) = %v (exit %d), want %q (exit %d)", tt.limit, err, ExitCode(err), tt.wantErr, ExitUsage)
		}
	}
}

func TestRepeatLimitOnlyWhenChosen(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"--limit", "20"}, " --limit 20"},
		{[]string{"--limit", "100"}, " --limit 100"},
	}
	for _, tt := range tests {
		var limit int
		var cursor string
		cmd := &cobra.Command{Use: "list"}
		AddPageFlags(cmd, &limit, &cursor, "things")
		if err := cmd.ParseFlags(tt.args); err != nil {
			t.Fatal(err)
		}
		if got := RepeatLimit(cmd, limit); got != tt.want {
			t.Errorf("RepeatLimit after %q = %q, want %q", tt.args, got, tt.want)
		}
	}
}
