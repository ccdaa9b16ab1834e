package api

import (
	"net/http"
	"strings"

	"github.com/hubctl/hubctl/internal/openapi"
)

// openAPIDocument serves the API's contract. Unlike the API's answers it
// may be cached, revalidated by its ETag: it changes only with the build.
func (s *Server) openAPIDocument(w http.ResponseWriter, r *http.Request) {
	doc, err := openapi.JSON()
	if err != nil {
		s.respondError(w, r, err)
		return
	}
	etag, _ := openapi.ETag()
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "no-cache")
	if etagMatches(r.Header.Values("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(doc)
}

// etagMatches applies If-None-Match (RFC 9110, 13.1.2): a list of entity
// tags or "*", compared weakly.
func etagMatches(headers []string, etag string) bool {
	for _, h := range headers {
		for _, candidate := range splitETags(h) {
			if candidate == "*" || candidate == etag || candidate == "W/"+etag {
				return true
			}
		}
	}
	return false
}

// splitETags splits an If-None-Match value at the commas between its
// entity tags, which may themselves hold commas inside their quotes.
func splitETags(h string) []string {
	var tags []string
	start, quoted := 0, false
	for i := 0; i < len(h); i++ {
		switch h[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				tags = append(tags, strings.Trim(h[start:i], " \t"))
				start = i + 1
			}
		}
	}
	return append(tags, strings.Trim(h[start:], " \t"))
}
