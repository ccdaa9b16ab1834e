package storage_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/cli/storage"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestPruneParsesItsFlagsWithoutAHub(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want storage.PruneOptions
	}{
		{nil, storage.PruneOptions{Format: output.JSON}},
		{[]string{"--dry-run", "-o", "yaml"}, storage.PruneOptions{Format: output.YAML, DryRun: true}},
	} {
		f, _, _, _ := cmdtest.Factory(nil)
		var got *storage.PruneOptions
		if err := cmdtest.Exec(t, f, storage.NewCmdPrune(f, func(o *storage.PruneOptions) error { got = o; return nil }), tc.args...); err != nil || got == nil {
			t.Fatalf("%q: err %v", tc.args, err)
		}
		tc.want.Factory = f
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("%q: %+v, want %+v", tc.args, *got, tc.want)
		}
	}
}

func decode[T any](t *testing.T, stdout string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("stdout is not the expected JSON: %v\n%s", err, stdout)
	}
	return v
}

// Status and prune answer alike directly on the database and through the
// API: the same tables, the same retention, a dry run that removes nothing.
func TestStorageCommandsBehaveTheSameInBothModes(t *testing.T) {
	type seen struct {
		tables    []string
		retention hubapi.StorageRetention
		dryRun    bool
	}
	look := func(env map[string]string) seen {
		var s seen
		for _, args := range [][]string{{"storage", "prune", "-o", "json"}, {"storage", "prune", "--dry-run", "-o", "json"}, {"storage", "status", "-o", "json"}} {
			r := clitest.Run(t, env, args...)
			if r.Code != 0 {
				t.Fatalf("%v: exit %d\n%s", args, r.Code, r.Stderr)
			}
			switch args[1] {
			case "prune":
				res := decode[hubapi.StoragePruneResult](t, r.Stdout)
				if args[2] == "--dry-run" {
					s.dryRun = res.DryRun
				}
			case "status":
				st := decode[hubapi.StorageStatus](t, r.Stdout)
				for _, tb := range st.Tables {
					s.tables = append(s.tables, tb.Table)
					if tb.Partitions < 1 {
						t.Errorf("%s has no partition", tb.Table)
					}
				}
				s.retention = st.Retention
			}
		}
		return s
	}
	direct := look(clitest.Database(pgtest.DSN(t)))
	remote := look(clitest.Remote(clitest.Serve(t, pgtest.DSN(t)), clitest.AdminToken))
	if !reflect.DeepEqual(direct, remote) {
		t.Errorf("the modes differ:\n direct %+v\n API    %+v", direct, remote)
	}
	want := []string{"events", "event_ids", "pull_entries", "delivery_jobs", "delivery_attempts", "quarantine"}
	if !slices.Equal(direct.tables, want) || !direct.dryRun || direct.retention.Events != "168h0m0s" {
		t.Errorf("status shows %+v, want the tables %v, a dry run and the default retention", direct, want)
	}
}
