package docs_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// A comment (or a page) points a reader at a section of a page as
// docs/<page>.md, <section>. The section's name is quoted, or runs to the
// first of , . ; : ) or ' (a possessive), where prose goes on:
// "docs/concepts.md, Ordering: first attempts start in seq order" names
// Ordering. Quoted names may follow it, separated by ", ", as a path:
// Decisions, "Purge". A name that starts in lower case is a reference only
// right after "(" (as "(docs/benchmarks.md, hubctl bench)"); elsewhere
// it is prose that follows a page's name, as another page's name is the
// next item of a list of pages.
var (
	reference = regexp.MustCompile(`docs/([\w-]+\.md), ((?:"[^"]+"|[^,.;:)'"]+)(?:, "[^"]+")*)`)
	heading   = regexp.MustCompile(`(?m)^#{1,6} +(.+?)#*$`)
	boldLead  = regexp.MustCompile(`(?m)^\s*(?:- )?\*\*(.+?)\*\*`)
)

// TestReferencesNameSections: every section a comment or a page
// names exists in its page, so a reader sent there finds it. A section is named
// by its heading's text, with or without quotes and without the heading's
// code marks; or by the bold lead that opens a paragraph or a bullet (as
// architecture.md names its decisions), whole or up to its first ";". A
// path names a section in each of its parts; two sections may be joined
// by " and " where the whole names none.
func TestReferencesNameSections(t *testing.T) {
	sections := map[string][]string{}
	sectionsOf := func(page string) []string {
		if names, ok := sections[page]; ok {
			return names
		}
		raw, err := os.ReadFile(page)
		if err != nil {
			return nil
		}
		text := fenced.ReplaceAllString(string(raw), "")
		var names []string
		for _, m := range heading.FindAllStringSubmatch(text, -1) {
			names = append(names, strings.ReplaceAll(strings.TrimSpace(m[1]), "`", ""))
		}
		for _, m := range boldLead.FindAllStringSubmatch(text, -1) {
			lead := strings.ReplaceAll(strings.TrimSuffix(m[1], "."), "`", "")
			first, _, _ := strings.Cut(lead, ";")
			names = append(names, lead, first)
		}
		sections[page] = names
		return names
	}

	checked := 0
	for file, comment := range comments(t, "..") {
		for _, m := range reference.FindAllStringSubmatchIndex(comment, -1) {
			page, name := comment[m[2]:m[3]], strings.TrimSpace(comment[m[4]:m[5]])
			afterParenthesis := m[0] > 0 && comment[m[0]-1] == '('
			if name == "" || strings.HasPrefix(name, "docs/") || unicode.IsLower(rune(name[0])) && !afterParenthesis {
				continue // prose, or a list of pages
			}
			checked++
			names := sectionsOf(page)
			if names == nil {
				t.Errorf("%s refers to docs/%s, which does not exist", file, page)
				continue
			}
			if !namesSections(name, names) {
				t.Errorf("%s refers to docs/%s, %s: the page has no such section", file, page, name)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no references found; the pattern is broken")
	}
}

func namesSections(name string, sections []string) bool {
	unquoted := strings.Trim(name, `"`)
	if slices.Contains(sections, unquoted) {
		return true
	}
	for _, sep := range []string{", ", " and "} {
		if parts := strings.Split(name, sep); len(parts) > 1 {
			return !slices.ContainsFunc(parts, func(part string) bool { return !namesSections(part, sections) })
		}
	}
	return false
}

// comments yields the prose of every file under root that can point at a
// page, keyed by the file's path from root: each comment group of a Go
// file, the comment lines of SQL migrations and YAML files, and Markdown
// pages outside their code blocks. Lines are joined into one text so that a
// reference broken across lines reads whole.
func comments(t *testing.T, root string) func(yield func(string, string) bool) {
	return func(yield func(string, string) bool) {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			texts, err := proseOf(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			for _, text := range texts {
				if !yield(rel, strings.Join(strings.Fields(text), " ")) {
					return filepath.SkipAll
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// lineComment is the text of a whole-line comment in SQL or YAML.
var lineComment = regexp.MustCompile(`(?m)^\s*(?:--|#)(.*)$`)

func proseOf(path string) ([]string, error) {
	switch filepath.Ext(path) {
	case ".go":
		parsed, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		var texts []string
		for _, group := range parsed.Comments {
			texts = append(texts, group.Text())
		}
		return texts, nil
	case ".md", ".sql", ".yaml", ".yml":
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if filepath.Ext(path) == ".md" {
			return []string{withoutCode(string(raw))}, nil
		}
		var lines []string
		for _, m := range lineComment.FindAllStringSubmatch(string(raw), -1) {
			lines = append(lines, m[1])
		}
		return []string{strings.Join(lines, "\n")}, nil
	}
	return nil, nil
}
