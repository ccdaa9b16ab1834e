package api

import (
	"os"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/service"
	"github.com/prometheus/client_golang/prometheus"
)

// apiDocPath is docs/api.md, relative to this package's directory, where
// go test runs.
const apiDocPath = "../../docs/api.md"

// TestDocsCoverEveryRoute walks the route table of a fully configured
// server: every route must have its "### METHOD /path" section in
// docs/api.md with a curl example and an answer, and every such section
// must name a route that is served, so the reference cannot silently fall
// behind the handlers nor outlive them.
func TestDocsCoverEveryRoute(t *testing.T) {
	doc, err := os.ReadFile(apiDocPath)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	for _, s := range endpointSections(string(doc)) {
		if _, twice := sections[s.pattern]; twice {
			t.Errorf("docs/api.md documents %s twice", s.pattern)
		}
		sections[s.pattern] = s.text
	}

	// Every optional part on, so every route is registered; the handlers
	// are never called, so the use cases need not be wired.
	server := New(Options{Gatherer: prometheus.NewRegistry(), ControlPlane: &service.ControlPlane{}})
	registered := map[string]bool{}
	for _, pattern := range server.patterns {
		registered[pattern] = true
		text, ok := sections[pattern]
		switch {
		case !ok:
			t.Errorf("docs/api.md has no section %q", "### "+pattern)
		case !strings.Contains(text, "curl "):
			t.Errorf("docs/api.md: %s has no curl example", pattern)
		case !strings.Contains(text, "```json") && !strings.Contains(text, "```text"):
			t.Errorf("docs/api.md: %s shows no answer", pattern)
		}
	}
	for pattern := range sections {
		if !registered[pattern] {
			t.Errorf("docs/api.md documents %s, which the server does not serve", pattern)
		}
	}
	if len(registered) == 0 {
		t.Fatal("the server registered no routes")
	}
}

// docSection is one endpoint's section of the API reference.
type docSection struct {
	pattern string // "METHOD /path", as the mux spells it
	text    string // everything up to the next heading
}

// endpointSections returns the sections of a Markdown document whose
// heading is "### METHOD /path". A section ends at the next heading of any
// level; lines inside fenced code blocks (shell comments start with "#"
// too) are never headings.
func endpointSections(doc string) []docSection {
	var (
		sections []docSection
		current  *docSection
		fenced   bool
	)
	for line := range strings.Lines(doc) {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			if current != nil {
				current.text += line
			}
			continue
		}
		current = nil
		heading, isLevel3 := strings.CutPrefix(strings.TrimSpace(line), "### ")
		method, path, _ := strings.Cut(heading, " ")
		if isLevel3 && isHTTPMethod(method) && strings.HasPrefix(path, "/") {
			sections = append(sections, docSection{pattern: heading})
			current = &sections[len(sections)-1]
		}
	}
	return sections
}

func isHTTPMethod(s string) bool {
	return s != "" && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}

func TestEndpointSections(t *testing.T) {
	doc := "# API\n\n### Authentication\ntext\n\n### GET /a/{id}\nintro\n```sh\n# a comment, not a heading\ncurl x\n```\n\n## Next part\n\n### POST /b\nbody\n"
	got := endpointSections(doc)
	if len(got) != 2 || got[0].pattern != "GET /a/{id}" || got[1].pattern != "POST /b" {
		t.Fatalf("sections %+v", got)
	}
	if !strings.Contains(got[0].text, "curl x") || strings.Contains(got[0].text, "Next part") || got[1].text != "body\n" {
		t.Errorf("section texts %q and %q", got[0].text, got[1].text)
	}
}
