package conformance

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCopyMatchesShared fails when testdata/conformance drifts from
// ../shared/conformance: the shared folder is the contract, the copy only
// lets a plain clone run the vectors.
func TestCopyMatchesShared(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(root, "..", "shared", "conformance")
	// A fork or a plain clone has no shared folder beside it, and hosted CI
	// sets CI=true: the repository's copy is what the tests read, so only a
	// shared folder that exists is compared with it.
	if _, err := os.Stat(shared); err != nil {
		t.Skipf("no shared folder at %s; the repository's copy is used as is", shared)
	}
	local := filepath.Join(root, "testdata", "conformance")

	sharedFiles := vectorFiles(t, shared)
	localFiles := vectorFiles(t, local)
	if len(sharedFiles) == 0 {
		t.Fatalf("%s holds no vector files", shared)
	}
	if !slices.Equal(sharedFiles, localFiles) {
		t.Fatalf("vector files differ:\n shared: %v\n  local: %v\ncopy them: cp %s/* %s/", sharedFiles, localFiles, shared, local)
	}
	for _, name := range sharedFiles {
		want, err := os.ReadFile(filepath.Join(shared, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(local, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("testdata/conformance/%s differs from the shared copy; re-copy it unchanged", name)
		}
	}
}

func vectorFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}
