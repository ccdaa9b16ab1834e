package portal

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// pageError is the error page's content.
type pageError struct {
	Title   string
	Message string
}

// page is what every template receives: the session (nil on pages shown
// signed out) and the page's own data.
type page struct {
	Session *sessionView
	Data    any
}

// sessionView is what the layout shows of the session.
type sessionView struct {
	Tenant   string
	Console  bool
	ReadOnly bool
	CSRF     string
}

var funcs = template.FuncMap{
	"path": func(id string) string { return url.PathEscape(id) },
	"time": formatTime,
	"timep": func(t *time.Time) template.HTML {
		if t == nil {
			return "—"
		}
		return formatTime(*t)
	},
	"strp": func(s *string) string {
		if s == nil {
			return "—"
		}
		return *s
	},
	"intp": func(n *int) string {
		if n == nil {
			return "—"
		}
		return fmt.Sprint(*n)
	},
	"boolp": func(b *bool) bool { return b != nil && *b },
	"join":  strings.Join,
	// short is the start of an id, enough to tell rows apart; the page
	// it links to shows it whole.
	"short": func(id string) string {
		if len(id) <= 13 {
			return id
		}
		return id[:13] + "…"
	},
	"sink": sinkSummary,
	// countsSample is how many of a subscription's latest deliveries its
	// 24 h counts read.
	"countsSample": func() int { return hubapi.DeliveryCountsSample },
	// dict hands a shared template more than one value.
	"dict": func(pairs ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(pairs); i += 2 {
			key, _ := pairs[i].(string)
			m[key] = pairs[i+1]
		}
		return m
	},
}

// formatTime shows a time in UTC, marked up so the portal's script can
// show it in the viewer's zone, with UTC on hover. Without scripts it
// stays UTC, which is still right.
func formatTime(t time.Time) template.HTML {
	if t.IsZero() {
		return "—"
	}
	utc := t.UTC()
	return template.HTML(fmt.Sprintf(`<time datetime="%s" title="%s">%s</time>`,
		utc.Format(time.RFC3339Nano), utc.Format("2006-01-02 15:04:05 UTC"), utc.Format("2006-01-02 15:04:05 UTC")))
}

// sinkSummary is one line naming where a subscription's events go.
func sinkSummary(sink map[string]any) string {
	kind, _ := sink["type"].(string)
	for _, key := range []string{"url", "queue_url", "exchange", "event_bus", "subject", "topic", "bucket"} {
		if v, ok := sink[key].(string); ok && v != "" {
			return kind + " → " + v
		}
	}
	return kind
}

// mustParsePages parses each page template with the layout, so every
// page is one template set of its own.
func mustParsePages() map[string]*template.Template {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	// Partials (named _*.html) define templates several pages share.
	partials, err := fs.Glob(templateFS, "templates/_*.html")
	if err != nil {
		panic(err)
	}
	pages := map[string]*template.Template{}
	for _, name := range names {
		base := strings.TrimSuffix(path.Base(name), ".html")
		if base == "layout" || strings.HasPrefix(base, "_") {
			continue
		}
		files := append([]string{"templates/layout.html", name}, partials...)
		pages[base] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, files...))
	}
	return pages
}

// render writes a page of a signed-in session with status 200.
func (h *Handler) render(req *request, name string, data any) error {
	h.write(req.w, http.StatusOK, name, page{Session: req.view(), Data: data})
	return nil
}

// renderCode writes a page of a signed-in session with another status,
// such as a form the hub refused, shown again with 400.
func (h *Handler) renderCode(req *request, status int, name string, data any) error {
	h.write(req.w, status, name, page{Session: req.view(), Data: data})
	return nil
}

// renderStatus writes a page outside a session.
func (h *Handler) renderStatus(w http.ResponseWriter, _ *http.Request, status int, name string, data any) {
	h.write(w, status, name, page{Data: data})
}

func (h *Handler) write(w http.ResponseWriter, status int, name string, p page) {
	t, ok := h.pages[name]
	if !ok {
		h.log.Error("portal: no such page template", "page", name)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	// Rendered whole first, so a template error becomes an error page
	// rather than half a page.
	var buf bytes.Buffer
	if err := t.Execute(&buf, p); err != nil {
		h.log.Error("portal: render page", "page", name, "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// stream writes a page of a signed-in session as it is rendered, each
// piece flushed at once and the connection's write deadline moved on, for
// a page whose data arrives over time (a channel it ranges over). A
// template error ends the page where it happened.
func (h *Handler) stream(req *request, name string, data any) {
	t, ok := h.pages[name]
	if !ok {
		h.log.Error("portal: no such page template", "page", name)
		http.Error(req.w, "internal error", http.StatusInternalServerError)
		return
	}
	req.w.Header().Set("Content-Type", "text/html; charset=utf-8")
	req.w.WriteHeader(http.StatusOK)
	w := &flushingWriter{w: req.w, rc: http.NewResponseController(req.w)}
	if err := t.Execute(w, page{Session: req.view(), Data: data}); err != nil {
		h.log.Error("portal: stream page", "page", name, "error", err)
	}
}

// streamWriteGrace is how long a streamed page may wait for its next
// piece before the connection is given up.
const streamWriteGrace = time.Minute

type flushingWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (f *flushingWriter) Write(p []byte) (int, error) {
	// Not every writer has a deadline to move (a test recorder has none).
	_ = f.rc.SetWriteDeadline(time.Now().Add(streamWriteGrace))
	n, err := f.w.Write(p)
	if err != nil {
		return n, err
	}
	return n, f.rc.Flush()
}

func (req *request) view() *sessionView {
	return &sessionView{
		Tenant:   req.caller.Tenant,
		Console:  req.caller.Kind == hubapi.CallerAdmin,
		ReadOnly: req.caller.ReadOnly,
		CSRF:     req.csrf,
	}
}

// fail answers an error of the control plane with its status and its
// message, which the hub writes for people; anything else is logged and
// answered without detail.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, title := statusOf(err)
	h.renderStatus(w, r, status, "error", pageError{Title: title, Message: h.messageOf(r, err)})
}

// messageOf is what a page says of a control plane's error: its message,
// unless it is the hub's own failure, which is logged and not shown.
func (h *Handler) messageOf(r *http.Request, err error) string {
	if status, _ := statusOf(err); status == http.StatusInternalServerError {
		h.log.Error("portal: page failed", "path_pattern", r.Pattern, "error", err)
		return "Something went wrong on the hub. Try again in a moment; if it keeps failing, tell the hub's operator."
	}
	return err.Error()
}

// statusOf maps the control plane's typed errors to a status and a title.
func statusOf(err error) (int, string) {
	var (
		invalid       *hubapi.ValidationError
		forbidden     *hubapi.ForbiddenError
		notFound      *hubapi.NotFoundError
		conflict      *hubapi.ConflictError
		unprocessable *hubapi.UnprocessableError
	)
	switch {
	case errors.As(err, &invalid):
		return http.StatusBadRequest, "That input was not accepted"
	case errors.As(err, &forbidden):
		return http.StatusForbidden, "Not allowed"
	case errors.As(err, &notFound):
		return http.StatusNotFound, "Not found"
	case errors.As(err, &conflict):
		return http.StatusConflict, "That cannot be done now"
	case errors.As(err, &unprocessable):
		return http.StatusUnprocessableEntity, "That did not work"
	}
	return http.StatusInternalServerError, "Something went wrong"
}
