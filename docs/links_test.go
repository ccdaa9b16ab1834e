// The repository's Markdown must stand alone: every relative link of the
// README and of docs/ resolves to a file in the repository (and a heading
// there, when it names one), and none leads outside it.
package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// link matches [text](target) outside code; images too.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

func TestLinksResolveInsideTheRepository(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../README.md")
	checked := 0
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(withoutCode(string(raw)), -1) {
			target := m[1]
			if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			abs, err := filepath.Abs(path)
			if err != nil {
				t.Fatal(err)
			}
			if rel, err := filepath.Rel(root, abs); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s links to %s, outside the repository", page, target)
				continue
			}
			if _, err := os.Stat(abs); err != nil {
				t.Errorf("%s links to %s, which does not exist", page, target)
				continue
			}
			if anchor != "" && strings.HasSuffix(abs, ".md") && !hasHeading(t, abs, anchor) {
				t.Errorf("%s links to %s, but %s has no heading #%s", page, target, filepath.Base(abs), anchor)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative links found; the pattern is broken")
	}
}

var (
	fenced     = regexp.MustCompile("(?ms)^```.*?^```$")
	inlineCode = regexp.MustCompile("`[^`\n]*`")
)

// withoutCode drops fenced blocks and inline code, where brackets are not
// links.
func withoutCode(s string) string {
	return inlineCode.ReplaceAllString(fenced.ReplaceAllString(s, ""), "")
}

// hasHeading reports whether the page has a heading whose GitHub anchor is
// anchor: lower case, punctuation dropped, spaces as hyphens.
func hasHeading(t *testing.T, page, anchor string) bool {
	t.Helper()
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(fenced.ReplaceAllString(string(raw), ""), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		if slug(strings.TrimLeft(line, "# ")) == anchor {
			return true
		}
	}
	return false
}

func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}
