// Package conformance locates the contract's test vectors. testdata/conformance
// holds them, so a plain clone tests itself; the copy test checks they match
// the upstream contract's when that is checked out beside the repository.
package conformance

import (
	"errors"
	"os"
	"path/filepath"
)

// RepoRoot walks up from the working directory (a package directory under
// go test) to the folder holding go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// Path returns the path of a vector file in the repository's copy.
func Path(name string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "testdata", "conformance", name), nil
}
